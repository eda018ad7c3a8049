package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapRemote turns an http entry into an `mcpshim --url` entry only with
// --remote, and unwrap restores the file byte for byte.
func TestWrapRemote(t *testing.T) {
	useWrapTestShim(t)
	home := t.TempDir()
	path := filepath.Join(home, ".mcp.json")
	orig := "{\n  \"mcpServers\": {\n    \"linear\": {\n      \"type\": \"http\",\n      \"url\": \"https://mcp.linear.example/mcp\",\n      \"headers\": {\"Authorization\": \"Bearer ${LINEAR_TOKEN}\"}\n    },\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@mcp/fs\"]}\n  }\n}\n"
	writeWrapFile(t, path, orig, 0o600)

	if code, _, stderr := runWrapCmd(t, home, "wrap", "--config", path); code != 0 || !strings.Contains(stderr, "linear: skipped: a remote") {
		t.Fatalf("wrap without --remote: exit %d, stderr:\n%s\nwant the http entry skipped", code, stderr)
	}
	code, _, stderr := runWrapCmd(t, home, "unwrap", "--config", path)
	if code != 0 || readWrapFile(t, path) != orig {
		t.Fatalf("unwrap: exit %d, stderr:\n%s", code, stderr)
	}

	code, _, stderr = runWrapCmd(t, home, "wrap", "--remote", "--config", path)
	if code != 0 || !strings.Contains(stderr, "linear: wrapped") || !strings.Contains(stderr, "fs: wrapped") {
		t.Fatalf("wrap --remote: exit %d, stderr:\n%s", code, stderr)
	}
	wrapped := readWrapFile(t, path)
	if code, _, stderr := runWrapCmd(t, home, "wrap", "--remote", "--config", path); code != 0 || readWrapFile(t, path) != wrapped {
		t.Fatalf("wrap --remote twice: exit %d, stderr:\n%s\nthe file changed; want it left alone", code, stderr)
	}
	for _, want := range []string{`"command": "` + wrapTestShim + `"`, `"--url", "https://mcp.linear.example/mcp"`, `"--header", "Authorization: Bearer ${LINEAR_TOKEN}"`} {
		if !strings.Contains(wrapped, want) {
			t.Errorf("the wrapped file lacks %s:\n%s", want, wrapped)
		}
	}
	if code, stdout, stderr := runWrapCmd(t, home, "wrap", "--check", "--config", path); code != 0 {
		t.Errorf("wrap --check after wrap --remote: exit %d, want 0 (the bridged entry runs behind mcpshim)\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runWrapCmd(t, home, "unwrap", "--config", path)
	if got := readWrapFile(t, path); code != 0 || got != orig {
		t.Fatalf("unwrap after wrap --remote: exit %d, stderr:\n%s\ngot:\n%s\nwant:\n%s", code, stderr, got, orig)
	}
}

// TestURLFlagErrors: a bad --url, a --header naming an unset variable, or
// --url with a command each get exit 64 and a message saying what to fix,
// without the secret of a header.
func TestURLFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "ftp://x/mcp"}, "want an http:// or https:// URL"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer ${NOPE_TOKEN}"}, "NOPE_TOKEN is not set"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--header", "sk-live-abcdefghijklmnop"}, "no 'Name:'"}, {[]string{"--url", "http://127.0.0.1:1/mcp", "--header", "Bad Name: x"}, "want 'Name: value'"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--", "npx", "server"}, "both given"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--request-timeout", "0s"}, "positive duration"},
	} {
		code, _, stderr := runWrapCmd(t, t.TempDir(), append([]string{"--ledger", "off"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcpshim %q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
		if strings.Contains(stderr, "abcdefghijklmnop") {
			t.Errorf("mcpshim %q: stderr shows the header's value: %q", tc.args, stderr)
		}
	}
}
