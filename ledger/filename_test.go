package ledger

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestFileName(t *testing.T) {
	long := strings.Repeat("n", 300)
	tests := []struct{ in, want string }{
		{"github", "github"},
		{"server-filesystem_1.2", "server-filesystem_1.2"},
		{"../../x", "x"},
		{"a/../../b", "a-..-..-b"},
		{"/etc/passwd", "etc-passwd"},
		{".hidden", "hidden"},
		{"..", "server"},
		{"", "server"},
		{"-rf", "rf"},
		{"C:\\Windows\\x", "C-Windows-x"},
		{"evil\x1b]0;t\x07", "evil-0-t"},
		{"résumé", "r-sum"},
		{"trailing.", "trailing"},
		{"con", "_con"},
		{"NUL", "_NUL"},
		{"com1.x", "_com1.x"},
		{"lpt9", "_lpt9"},
		{"console", "console"},
		{"com10", "com10"},
	}
	for _, tt := range tests {
		if got := FileName(tt.in); got != tt.want {
			t.Errorf("FileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		dir := filepath.FromSlash("/state/mcpshim")
		if p := PathIn(dir, tt.in); filepath.Dir(p) != dir {
			t.Errorf("PathIn(%s, %q) = %q: outside the directory", dir, tt.in, p)
		}
	}
	if got := FileName(long); len(got) != maxFileName || !strings.HasPrefix(got, strings.Repeat("n", maxFileName-9)+"-") {
		t.Errorf("FileName(%d n's) = %q, want %d bytes ending in a digest", len(long), got, maxFileName)
	}
	if FileName(long+"a") == FileName(long+"b") {
		t.Errorf("two long names map to the same file %q", FileName(long+"a"))
	}
}
