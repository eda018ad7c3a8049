package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

const wrapTestShim = "/opt/mcpshim/bin/mcpshim"

// useWrapTestShim makes wrap write wrapTestShim, a path whose name is mcpshim, as the
// test binary's own path is not.
func useWrapTestShim(t *testing.T) {
	t.Helper()
	saved := wrapExecutable
	wrapExecutable = func() (string, error) { return wrapTestShim, nil }
	t.Cleanup(func() { wrapExecutable = saved })
}

// runWrapCmd runs the command line in process with HOME=home.
func runWrapCmd(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, []string{"HOME=" + home, "PATH=" + systemPath()}, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func writeWrapFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

// onlyBackup is the one backup a kind of rewrite (wrap, unwrap) kept under
// HOME=home's state directory.
func onlyBackup(t *testing.T, home, kind string) string {
	t.Helper()
	state := ledger.DefaultDir(func(k string) string { return map[string]string{"HOME": home}[k] })
	got, _ := filepath.Glob(filepath.Join(state, "backups", "*."+kind+".bak"))
	if len(got) != 1 {
		t.Fatalf("%s backups: %v, want one", kind, got)
	}
	return got[0]
}

func readWrapFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var wrapLayouts = []struct{ name, content string }{
	{"compact", `{"mcpServers":{"fs":{"command":"npx","args":["-y","@mcp/fs","/tmp"]},"web":{"type":"http","url":"https://x.test/mcp"}}}`},
	{"indented", "{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"@mcp/fs\"\n      ],\n      \"env\": {\"ROOT\": \"${HOME}\"}\n    },\n    \"mem\": {\n      \"command\": \"memory\"\n    }\n  }\n}\n"},
	{"crlf", "{\r\n\t\"mcpServers\": {\r\n\t\t\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@mcp/fs\"]}\r\n\t}\r\n}\r\n"},
	{"unicode", "{\"mcpServers\": {\"données\": {\"command\": \"/Users/jos\\u00e9/bin/sërver\", \"args\": [\"—\", \"日本\"]}}}"},
	{"unknown keys", "{\n  \"$schema\": \"x\",\n  \"mcpServers\": {\n    \"db\": {\n      \"type\": \"stdio\",\n      \"x-team\": {\"owner\": [\"me\"]},\n      \"args\": [\"serve\"],\n      \"command\": \"db-mcp\",\n      \"cwd\": \"/srv\"\n    }\n  },\n  \"other\": [1, 2.5, null]\n}"},
}

func TestWrapUnwrapRoundTrip(t *testing.T) {
	useWrapTestShim(t)
	for _, l := range wrapLayouts {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			file := filepath.Join(dir, ".mcp.json")
			writeWrapFile(t, file, l.content, 0o640)
			orig, _ := os.Stat(file) // 0640 on Unix; Windows has no modes to keep

			code, stdout, stderr := runWrapCmd(t, dir, "wrap", "--config", file, "--ledger", "logs", "--restart", "on-failure")
			if code != 0 {
				t.Fatalf("wrap: exit %d, want 0; stderr:\n%s", code, stderr)
			}
			wrapped := readWrapFile(t, file)
			if !strings.Contains(wrapped, jsonString(wrapTestShim)) || !strings.Contains(wrapped, `"--ledger"`) ||
				!strings.Contains(wrapped, jsonString(filepath.Join(dir, "logs"))) || !strings.Contains(wrapped, `"--restart"`) {
				t.Errorf("wrapped file lacks the shim, the absolute ledger or the baked flag:\n%s", wrapped)
			}
			if !strings.HasPrefix(stdout, "--- "+file+"\n+++ "+file+"\n@@ ") {
				t.Errorf("wrap stdout = %q, want a unified diff of %s", stdout, file)
			}
			bak := onlyBackup(t, dir, "wrap")
			if got := readWrapFile(t, bak); got != l.content {
				t.Errorf("backup = %q, want the original %q", got, l.content)
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != orig.Mode().Perm() {
				t.Errorf("%s: mode %v (%v), want %v like the original", file, fi.Mode().Perm(), err, orig.Mode().Perm())
			}
			if err := safefile.CheckPrivate(bak); err != nil {
				t.Errorf("%s: %v; want it its owner's only (0600 on Unix): it holds the config's secrets", bak, err)
			}

			code, stdout, stderr = runWrapCmd(t, dir, "wrap", "--config", file, "--ledger", "elsewhere")
			if code != 0 || stdout != "" || readWrapFile(t, file) != wrapped || readWrapFile(t, bak) != l.content {
				t.Errorf("second wrap: exit %d, stdout %q, stderr %q; want 0, no diff, file and backup untouched", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "already wrapped") {
				t.Errorf("second wrap stderr = %q, want it to say already wrapped", stderr)
			}

			code, _, stderr = runWrapCmd(t, dir, "unwrap", "--config", file)
			if code != 0 {
				t.Fatalf("unwrap: exit %d, want 0; stderr:\n%s", code, stderr)
			}
			if got := readWrapFile(t, file); got != l.content {
				t.Errorf("unwrap gave\n%q\nwant the original\n%q", got, l.content)
			}
			if got := readWrapFile(t, onlyBackup(t, dir, "unwrap")); got != wrapped {
				t.Errorf("unwrap backup = %q, want the wrapped version", got)
			}
			if got := readWrapFile(t, bak); got != l.content {
				t.Errorf("after unwrap, wrap's backup = %q, want the original still", got)
			}
			if fi, err := os.Stat(filepath.Join(dir, "logs")); err != nil || !fi.IsDir() {
				t.Errorf("the ledger directory logs was not made: %v", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 3 {
				t.Errorf("dir holds %v, want only the file, logs and HOME's .local (no backup, no temp files)", entries)
			}
		})
	}
}

func TestWrapDryRun(t *testing.T) {
	useWrapTestShim(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "claude_desktop_config.json")
	content := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\"},\n    \"web\": {\"url\": \"https://x.test\"}\n  }\n}\n"
	writeWrapFile(t, file, content, 0o600)
	code, stdout, stderr := runWrapCmd(t, dir, "wrap", "--dry-run", "--config", file)
	if code != 0 {
		t.Fatalf("wrap --dry-run: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	want := "--- " + file + "\n+++ " + file + "\n@@ -1,6 +1,6 @@\n {\n   \"mcpServers\": {\n" +
		"-    \"fs\": {\"command\": \"npx\"},\n" +
		"+    \"fs\": {\"command\": \"" + wrapTestShim + "\", \"args\": [ \"--name\", \"fs\", \"--\", \"npx\" ]},\n" +
		"     \"web\": {\"url\": \"https://x.test\"}\n   }\n }\n"
	if stdout != want {
		t.Errorf("wrap --dry-run stdout:\n%s\nwant\n%s", stdout, want)
	}
	for _, s := range []string{file + ": fs: to wrap", file + ": web: skipped: a remote (url) server"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("wrap --dry-run stderr = %q, want it to contain %q", stderr, s)
		}
	}
	if got := readWrapFile(t, file); got != content {
		t.Errorf("wrap --dry-run changed the file to %q", got)
	}
	runWrapCmd(t, dir, "wrap", "--dry-run", "--config", file, "--ledger", filepath.Join(dir, "logs"))
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("wrap --dry-run left %v, want only the config", entries)
	}
}

func TestWrapCheck(t *testing.T) {
	useWrapTestShim(t)
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	writeWrapFile(t, file, `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "web": {"url": "https://x.test"}}}`, 0o644)

	code, stdout, _ := runWrapCmd(t, dir, "wrap", "--check", "--config", file)
	if want := file + ": a: not wrapped\n" + file + ": b: not wrapped\n"; code != 1 || stdout != want {
		t.Errorf("wrap --check before: exit %d, stdout %q; want 1, %q", code, stdout, want)
	}
	if code, _, stderr := runWrapCmd(t, dir, "wrap", "--config", file, "--server", "a"); code != 0 {
		t.Fatalf("wrap --server a: exit %d; stderr:\n%s", code, stderr)
	}
	if code, stdout, _ := runWrapCmd(t, dir, "wrap", "--check", "--config", file, "--server", "a"); code != 0 {
		t.Errorf("wrap --check --server a after wrapping a: exit %d, stdout %q; want 0", code, stdout)
	}
	if code, stdout, _ := runWrapCmd(t, dir, "wrap", "--check", "--config", file); code != 1 || stdout != file+": b: not wrapped\n" {
		t.Errorf("wrap --check with b bare: exit %d, stdout %q; want 1 listing b", code, stdout)
	}
	runWrapCmd(t, dir, "wrap", "--config", file)
	if code, stdout, _ := runWrapCmd(t, dir, "wrap", "--check", "--config", file); code != 0 || stdout != "all 2 stdio servers run behind mcpshim\n" {
		t.Errorf("wrap --check after wrap: exit %d, stdout %q; want 0", code, stdout)
	}
	before := readWrapFile(t, file)
	if code, _, _ := runWrapCmd(t, dir, "wrap", "--check", "--config", file); code != 0 || readWrapFile(t, file) != before {
		t.Errorf("wrap --check wrote the file or failed: exit %d", code)
	}
}

func TestWrapRefusals(t *testing.T) {
	useWrapTestShim(t)
	tests := []struct {
		name, content, want string
	}{
		{"comment", "{\n  // local servers\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}", ":2:3: comment: Claude Code reads this file as strict JSON"},
		{"block comment", "{\"mcpServers\": {\"a\": {\"command\": \"x\" /* why */}}}", ":1:38: comment: Claude Code reads this file as strict JSON"},
		{"trailing comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", ":3:26: unexpected '}', want a quoted key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			good := filepath.Join(dir, "good", ".mcp.json")
			bad := filepath.Join(dir, "bad", ".mcp.json")
			goodContent := `{"mcpServers": {"a": {"command": "x"}}}`
			writeWrapFile(t, good, goodContent, 0o644)
			writeWrapFile(t, bad, tt.content, 0o644)
			code, stdout, stderr := runWrapCmd(t, dir, "wrap", "--config", good, "--config", bad)
			if code != exitConfig || !strings.Contains(stderr, bad+tt.want) || !strings.Contains(stderr, "nothing written") {
				t.Errorf("wrap of %q: exit %d, stderr %q; want %d and %q", tt.content, code, stderr, exitConfig, bad+tt.want)
			}
			if stdout != "" || readWrapFile(t, good) != goodContent || readWrapFile(t, bad) != tt.content {
				t.Errorf("a refused run printed %q or wrote a file", stdout)
			}
		})
	}
}

func TestWrapFindsClientConfigs(t *testing.T) {
	useWrapTestShim(t)
	project, home := t.TempDir(), t.TempDir()
	t.Chdir(project)
	writeWrapFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"p": {"command": "x"}}}`, 0o644)
	writeWrapFile(t, filepath.Join(home, ".claude.json"), `{"projects": {`+jsonString(project)+`: {"mcpServers": {"local": {"command": "y"}}}}}`, 0o600)
	code, _, stderr := runWrapCmd(t, home, "wrap")
	if code != 0 {
		t.Fatalf("wrap: exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{filepath.Join(project, ".mcp.json") + ": p: wrapped", filepath.Join(home, ".claude.json") + ": local (project " + project + "): wrapped"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("wrap stderr = %q, want %q", stderr, want)
		}
	}
	if got := readWrapFile(t, filepath.Join(home, ".claude.json")); !strings.Contains(got, `"--name", "local", "--", "y"`) {
		t.Errorf("~/.claude.json = %s, want local wrapped", got)
	}

	empty := t.TempDir()
	t.Chdir(empty)
	if code, _, stderr := runWrapCmd(t, empty, "wrap"); code != exitConfig || !strings.Contains(stderr, "no client config") {
		t.Errorf("wrap with no config around: exit %d, stderr %q; want %d, no client config", code, stderr, exitConfig)
	}
}

func TestWrapSymlinkedConfig(t *testing.T) {
	useWrapTestShim(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	link := filepath.Join(dir, ".mcp.json")
	writeWrapFile(t, target, `{"mcpServers": {"a": {"command": "x"}}}`, 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWrapCmd(t, dir, "wrap", "--config", link); code != 0 {
		t.Fatalf("wrap: exit %d; stderr:\n%s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink (%v)", link, err)
	}
	if got := readWrapFile(t, target); !strings.Contains(got, wrapTestShim) {
		t.Errorf("link target = %s, want it wrapped", got)
	}
}

func TestWrapUsesOwnAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	writeWrapFile(t, file, `{"mcpServers": {"a": {"command": "x"}}}`, 0o644)
	if code, _, stderr := runWrapCmd(t, dir, "wrap", "--config", file); code != 0 {
		t.Fatalf("wrap: exit %d; stderr:\n%s", code, stderr)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		t.Fatal(err)
	}
	if got := readWrapFile(t, file); !filepath.IsAbs(self) || !strings.Contains(got, `{"command": `+jsonString(self)+`, "args"`) {
		t.Errorf("wrapped entry %s, want the command to be this binary, %s", got, self)
	}
}

func TestWrapUsage(t *testing.T) {
	useWrapTestShim(t)
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	writeWrapFile(t, file, `{"mcpServers": {"a": {"command": "x"}}}`, 0o644)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wrap", "--help"}, 0, "usage: mcpshim wrap"},
		{[]string{"wrap", "npx"}, exitUsage, `unexpected argument "npx"`},
		{[]string{"wrap", "--config"}, exitUsage, "--config needs a value"},
		{[]string{"wrap", "--check", "--dry-run"}, exitUsage, "do not go together"},
		{[]string{"wrap", "--dry-run=yes"}, exitUsage, "--dry-run=yes takes no value"},
		{[]string{"unwrap", "--ledger", "x"}, exitUsage, "unknown flag --ledger"},
		{[]string{"unwrap", "--check"}, exitUsage, "unknown flag --check"},
		{[]string{"wrap", "--config", file, "--capture", "everything"}, exitUsage, `mcpshim would refuse the flags to bake (--capture everything): --capture "everything": want meta or full`},
		{[]string{"wrap", "--config", file, "--handshake-timeout", "soon"}, exitUsage, `--handshake-timeout soon: want a duration such as 2s, 500ms or 1m30s`},
		{[]string{"wrap", "--config", file, "--restart"}, exitUsage, "--restart needs a value"},
		{[]string{"wrap", "--config", file, "--capture-everything"}, exitUsage, "unknown flag --capture-everything: neither a wrap flag nor one of mcpshim's"},
		{[]string{"wrap", "--config", file, "--name", "x"}, exitUsage, "--name is not baked"},
		{[]string{"wrap", "--config", file, "--server", "nope"}, exitUsage, `no server "nope"`},
		{[]string{"wrap", "--check", "--config", file, "--server", "nope"}, exitUsage, `no stdio server "nope"`},
		{[]string{"wrap", "--config", filepath.Join(dir, "missing.json")}, exitConfig, "missing.json"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runWrapCmd(t, dir, tt.args...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("mcpshim %q: exit %d, output %q; want %d and %q", tt.args, code, stdout+stderr, tt.code, tt.want)
		}
	}
	if got := readWrapFile(t, file); got != `{"mcpServers": {"a": {"command": "x"}}}` {
		t.Errorf("a usage error changed %s to %s", file, got)
	}
}

func TestParseWrapArgs(t *testing.T) {
	root := filepath.VolumeName(os.TempDir()) + string(filepath.Separator) // / or C:\
	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	tests := []struct {
		args  []string
		baked []string
	}{
		{nil, nil},
		{[]string{"--ledger", abs("l")}, []string{"--ledger", abs("l")}},
		{[]string{"-ledger=rel/l"}, []string{"--ledger", abs("cwd/rel/l")}},
		{[]string{"--ledger", "off"}, []string{"--ledger", "off"}},
		{[]string{"--ledger", abs("l"), "--capture", "full", "--server", "x"}, []string{"--ledger", abs("l"), "--capture", "full"}},
		{[]string{"--restart=on-failure", "--ledger", abs("l")}, []string{"--ledger", abs("l"), "--restart=on-failure"}},
		{[]string{"--lock", "tools.lock", "--lock-mode", "enforce", "--handshake-timeout", "20s"}, []string{"--lock", abs("cwd/tools.lock"), "--lock-mode", "enforce", "--handshake-timeout", "20s"}},
		{[]string{"-quiet", "--json", "--max-restarts", "3", "--dry-run"}, []string{"-quiet", "--max-restarts", "3"}},
	}
	for _, tt := range tests {
		o, err := parseWrapArgs(tt.args, false, abs("cwd"))
		if err != nil || strings.Join(o.Baked, " ") != strings.Join(tt.baked, " ") {
			t.Errorf("parseWrapArgs(%q) baked = %q, %v; want %q", tt.args, o.Baked, err, tt.baked)
		}
	}
}
