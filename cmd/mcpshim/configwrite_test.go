package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// asNobody returns argv run as the user nobody (setpriv), with the binary
// copied where nobody can run it, and dir made nobody's. Not root: argv as
// it is, this user being another than the files' owner already.
func asNobody(t *testing.T, dir string, argv ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		return argv
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		missingTool(t, "setpriv", "util-linux")
	}
	bin, err := os.MkdirTemp("", "mcpshim-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	data, err := os.ReadFile(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "mcpshim"), data, 0o755)
	os.Chmod(bin, 0o755)
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	return append([]string{setpriv, fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody), "--clear-groups",
		filepath.Join(bin, "mcpshim")}, argv[1:]...)
}

// publicDir is a directory every user can enter (t.TempDir is 0700 root's).
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcpshim-wrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return dir
}

func runIn(t *testing.T, home string, argv ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/bin:/bin", "NO_COLOR=1"}, testkit.Env()...)
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%v: %v", argv, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

const oneServer = "{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@mcp/fs\"]\n    }\n  }\n}\n"

// TestWrapRefusesReadOnly: a 0444 config is left alone, as an editor
// leaves it, by root and by its owner alike; nothing else is written.
func TestWrapRefusesReadOnly(t *testing.T) {
	for _, who := range []string{"this user", "its owner, not root"} {
		t.Run(who, func(t *testing.T) {
			home := publicDir(t)
			file := filepath.Join(home, ".mcp.json")
			os.WriteFile(file, []byte(oneServer), 0o444)
			os.Chmod(file, 0o444)
			argv := []string{builtShim(t), "wrap", "--config", file}
			if who != "this user" {
				argv = asNobody(t, home, argv...)
				os.Chown(file, nobody, nobody)
			}
			code, out := runIn(t, home, argv...)
			st, _ := os.Stat(file)
			if b, _ := os.ReadFile(file); code != exitConfig || string(b) != oneServer || st.Mode().Perm() != 0o444 {
				t.Errorf("wrap of a 0444 file: exit %d, mode %v, file changed: %v; want %d and the file as it was\n%s",
					code, st.Mode().Perm(), string(b) != oneServer, exitConfig, out)
			}
			if !strings.Contains(out, "read-only (mode 0444)") || !strings.Contains(out, "chmod u+w") {
				t.Errorf("wrap's output does not say the file is read-only and what to do:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(home, ".local", "state", "mcpshim", "backups")); err == nil {
				t.Errorf("a backup was written for a file that was refused")
			}
		})
	}
}

// TestWrapUnwrapByteForByte: through the binary, wrap then unwrap gives the
// file back byte for byte when args was an empty array in any spelling, when
// a comment stood before the first argument, and for a Codex file with a
// byte order mark (which Codex reads).
func TestWrapUnwrapByteForByte(t *testing.T) {
	for _, tt := range []struct{ file, content string }{
		{".mcp.json", "{\"mcpServers\": {\"a\": {\"type\": \"stdio\", \"command\": \"srv\", \"args\": [], \"env\": {}}}}\n"},
		{".mcp.json", `{"mcpServers": {"a": {"command": "srv", "args" : [ ]}}}`},
		{".mcp.json", `{"mcpServers": {"a": {"command": "srv"}}}`},
		{".vscode/mcp.json", `{"servers": {"a": {"command": "srv", "args": [/*x*/]}}}`},
		{".vscode/mcp.json", `{"servers": {"a": {"command": "srv", "args": [/* the root */ "/tmp"]}}}`},
		{".codex/config.toml", "\xEF\xBB\xBF[mcp_servers.a]\ncommand = \"srv\"\nargs = [\"-y\"]\n"},
	} {
		home := t.TempDir()
		file := filepath.Join(home, tt.file)
		writeWrapFile(t, file, tt.content, 0o600)
		code, out := runIn(t, home, builtShim(t), "wrap", "--config", file)
		if wrapped := readWrapFile(t, file); code != 0 || !strings.Contains(wrapped, `"--name"`) {
			t.Errorf("wrap %q: exit %d, file %q\n%s", tt.content, code, wrapped, out)
			continue
		}
		code, out = runIn(t, home, builtShim(t), "unwrap", "--config", file)
		if got := readWrapFile(t, file); code != 0 || got != tt.content {
			t.Errorf("unwrap: exit %d, got %q, want the original %q\n%s", code, got, tt.content, out)
		}
	}
}

// TestDeepConfigRefused: a config nested millions deep is refused with a
// message naming where, by wrap and by probe, instead of a stack overflow.
func TestDeepConfigRefused(t *testing.T) {
	const n = 2_000_000
	home := t.TempDir()
	deep := strings.Repeat("[", n) + strings.Repeat("]", n)
	for _, f := range []struct{ name, content string }{
		{".mcp.json", `{"mcpServers": {"a": {"command": "x", "args": ` + deep + `}}}`},
		{".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\nargs = " + deep + "\n"},
	} {
		file := filepath.Join(home, f.name)
		writeWrapFile(t, file, f.content, 0o600)
		for _, cmd := range []string{"wrap", "probe"} {
			code, out := runIn(t, home, builtShim(t), cmd, "--config", file)
			if code != exitConfig || !strings.Contains(out, "nested more than 1000 deep") || strings.Contains(out, "goroutine") {
				t.Errorf("%s --config %s: exit %d, output %.300s; want %d and a message", cmd, f.name, code, out, exitConfig)
			}
		}
	}
}

// TestWrapRemoteOneLine: wrap --remote keeps the original entry in one
// argument on one line (clients print args: `claude mcp get` showed four
// lines of Args), and unwrap still restores it byte for byte.
func TestWrapRemoteOneLine(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, ".mcp.json")
	content := "{\n  \"mcpServers\": {\n    \"linear\": {\n      \"type\": \"http\",\n      \"url\": \"https://mcp.linear.example/mcp\",\n" +
		"      \"headers\": {\"Authorization\": \"Bearer ${LINEAR_TOKEN}\"}\n    }\n  }\n}\n"
	writeWrapFile(t, file, content, 0o600)
	if code, out := runIn(t, home, builtShim(t), "wrap", "--remote", "--config", file); code != 0 {
		t.Fatalf("wrap --remote: exit %d\n%s", code, out)
	}
	var doc struct {
		MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(readWrapFile(t, file)), &doc); err != nil {
		t.Fatal(err)
	}
	args := doc.MCPServers["linear"].Args
	if len(args) < 2 || args[len(args)-2] != "--remote-entry" || strings.ContainsAny(args[len(args)-1], "\r\n") {
		t.Errorf("wrapped args %q: want the original entry on one line after --remote-entry", args)
	}
	if code, out := runIn(t, home, builtShim(t), "unwrap", "--config", file); code != 0 || readWrapFile(t, file) != content {
		t.Errorf("unwrap: exit %d, file %q; want the original\n%s", code, readWrapFile(t, file), out)
	}
}
