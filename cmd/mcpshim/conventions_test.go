package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConventions, through the built binary: typos get a suggestion and
// exit 64; help COMMAND and COMMAND --help print that command's usage on
// stdout and exit 0; usage spells flags --name; lock and wrap take --json.
func TestConventions(t *testing.T) {
	dir := t.TempDir()
	env := []string{"HOME=" + dir, "PATH=" + systemPath(), "XDG_STATE_HOME=" + dir, "XDG_CACHE_HOME=" + dir}
	tests := []struct {
		args   []string
		code   int
		stdout string // substrings
		stderr string
	}{
		{[]string{"ledgr"}, exitUsage, "", `unknown command "ledgr"; did you mean ledger?`},
		{[]string{"prob", "--config", "x"}, exitUsage, "", "did you mean probe?"},
		{[]string{"ledger", "shwo"}, exitUsage, "", `no subcommand or ledger file "shwo"; did you mean show?`},
		{[]string{"probe", "--timout", "3s"}, exitUsage, "", "did you mean --timeout?"},
		{[]string{"help", "ledger"}, 0, "usage: mcpshim ledger", ""},
		{[]string{"help", "probe"}, 0, "  --timeout DURATION", ""},
		{[]string{"probe", "--help"}, 0, "usage: mcpshim probe", ""},
		{[]string{"lock", "-h"}, 0, "  --allow-empty NAME", ""},
		{[]string{"wrap", "--help"}, 0, "usage: mcpshim wrap", ""},
		{[]string{"help", "wrap"}, 0, "usage: mcpshim wrap", ""},
		{[]string{"help", "completion"}, 0, "usage: mcpshim completion bash|zsh|fish", ""},
		{[]string{"help", "lokc"}, exitUsage, "", "did you mean lock?"},
		{[]string{"help"}, 0, `"command": ` + jsonString(builtShim(t)), ""},
		{[]string{"help"}, 0, `  --permafail-codes string`, ""},
		{[]string{"completion", "bsh"}, exitUsage, "", `no shell "bsh"; did you mean bash?`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runBuilt(t, dir, env, tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("mcpshim %q: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
		if strings.Contains(stdout+stderr, "\n  -timeout") || strings.Contains(stdout+stderr, "\n  -config") {
			t.Errorf("mcpshim %q: a flag spelled with one dash:\n%s%s", tt.args, stdout, stderr)
		}
	}

	cfg := writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy", "--tools", "x,y")})
	lockFile := filepath.Join(dir, "lock.json")
	code, stdout, stderr := runBuilt(t, dir, env, "lock", "--json", "--config", cfg, "--out", lockFile)
	var rep lockJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || !rep.Written || len(rep.Servers) != 1 || strings.Join(rep.Servers[0].Tools, ",") != "x,y" {
		t.Errorf("lock --json: exit %d, %v, %+v\n%s%s; want written, server a with tools x, y", code, err, rep, stdout, stderr)
	}
}

// jsonString is s as a JSON string: a Windows path's backslashes doubled.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPowerShellCompletion: the script registers a native completer for
// mcpshim and mcpshim.exe that asks mcpshim __complete, as the other shells'
// do, and leaves file names to PowerShell. No PowerShell runs it here (none
// on the build machine).
func TestPowerShellCompletion(t *testing.T) {
	code, stdout, stderr := runBuilt(t, t.TempDir(), nil, "completion", "powershell")
	for _, want := range []string{"Register-ArgumentCompleter -Native -CommandName mcpshim, mcpshim.exe",
		"@('__complete')", "':files'", "':commands'", "CompletionResult"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("completion powershell: exit %d, script lacks %q\n%s%s", code, want, stdout, stderr)
		}
	}
	if got := completions(&cli{}, []string{"completion"}, "p"); !slices.Contains(got, "powershell") {
		t.Errorf("completing mcpshim completion p: %q, want powershell among them", got)
	}
}
