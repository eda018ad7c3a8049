package clientconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(strings.Repeat("x", i) + "\n")
		}
		return b.String()
	}
	edit := func(s string, pairs ...string) string {
		for i := 0; i < len(pairs); i += 2 {
			s = strings.Replace(s, pairs[i], pairs[i+1], 1)
		}
		return s
	}
	tests := []struct{ name, a, b, want string }{
		{"same", "a\nb\n", "a\nb\n", "--- f\n+++ f\n"},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"from nothing", "", "a\n", "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+a\n"},
		{"to nothing", "a\n", "", "--- f\n+++ f\n@@ -1,1 +0,0 @@\n-a\n"},
		{"no final newline", "a\nb", "a\nc", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"insert at top", "b\nc\n", "a\nb\nc\n", "--- f\n+++ f\n@@ -1,2 +1,3 @@\n+a\n b\n c\n"},
		{"two hunks", lines(12), edit(lines(12), "x\n", "1\n", "xxxxxxxxxxxx\n", "12\n"),
			"--- f\n+++ f\n@@ -1,4 +1,4 @@\n-x\n+1\n xx\n xxx\n xxxx\n@@ -9,4 +9,4 @@\n xxxxxxxxx\n xxxxxxxxxx\n xxxxxxxxxxx\n-xxxxxxxxxxxx\n+12\n"},
		{"one hunk when close", lines(6), edit(lines(6), "x\n", "1\n", "xxxxxx\n", "6\n"),
			"--- f\n+++ f\n@@ -1,6 +1,6 @@\n-x\n+1\n xx\n xxx\n xxxx\n xxxxx\n-xxxxxx\n+6\n"},
		{"middle of a long file", lines(20), edit(lines(20), "xxxxxxxxxx\n", "ten\nten again\n"),
			"--- f\n+++ f\n@@ -7,7 +7,8 @@\n xxxxxxx\n xxxxxxxx\n xxxxxxxxx\n-xxxxxxxxxx\n+ten\n+ten again\n xxxxxxxxxxx\n xxxxxxxxxxxx\n xxxxxxxxxxxxx\n"},
	}
	for _, tt := range tests {
		if got := Diff("f", []byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("%s: Diff(%q, %q) =\n%s\nwant\n%s", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}

// TestDiffAppliesWithPatch feeds rewrite diffs to patch(1): the output is a
// real patch, not only a picture of one.
func TestDiffAppliesWithPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("no patch(1) here")
	}
	docs := []string{
		`{"mcpServers":{"fs":{"command":"npx","args":["-y","@mcp/fs"]}}}`,
		"{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\"\n      ]\n    },\n    \"a\": {\"url\": \"https://x\"},\n    \"b\": {\"url\": \"https://x\"},\n    \"c\": {\"url\": \"https://x\"},\n    \"d\": {\"url\": \"https://x\"},\n    \"mem\": {\n      \"command\": \"memory\"\n    }\n  }\n}\n",
		"{\r\n\t\"mcpServers\": {\r\n\t\t\"fs\": {\"command\": \"npx\"}\r\n\t}\r\n}",
	}
	for _, doc := range docs {
		wrapped, _, err := Wrap(".mcp.json", []byte(doc), shim, flags, Scope{})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), ".mcp.json")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(patch, "--quiet", file)
		cmd.Stdin = strings.NewReader(Diff(file, []byte(doc), wrapped))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("patch of %q: %v\n%s", doc, err, out)
			continue
		}
		if got, _ := os.ReadFile(file); string(got) != string(wrapped) {
			t.Errorf("patched %q gives\n%q\nwant\n%q", doc, got, wrapped)
		}
	}
}
