package ledger

import (
	"math/rand/v2"
	"path/filepath"
	"regexp"
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

// TestFileSafeIsTheRegexp proves fileSafe replaces what the regexp
// [^A-Za-z0-9._-]+ replaced, runes and invalid UTF-8 included.
func TestFileSafeIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	pieces := []string{"a", "Z", "9", ".", "_", "-", " ", "/", "\\", "\x00", "\x1b", "\x7f", "é", "世", "\xff", "\xc3", "\U0001F600", "--", ".."}
	r := rand.New(rand.NewPCG(28, 2))
	for range 5000 {
		var b strings.Builder
		for n := r.IntN(12); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		in := b.String()
		if got, want := fileSafe(in), re.ReplaceAllString(in, "-"); got != want {
			t.Fatalf("fileSafe(%q): got %q, want %q", in, got, want)
		}
	}
}
