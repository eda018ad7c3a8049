package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpshim-dev/mcpshim/report"
	"testing"
)

// TestConventions, through the built binary: typos get a suggestion and
// exit 64; help COMMAND and COMMAND --help print that command's usage on
// stdout and exit 0; usage spells flags --name; lock and wrap take --json.
func TestConventions(t *testing.T) {
	dir := t.TempDir()
	env := []string{"HOME=" + dir, "PATH=/usr/bin:/bin", "XDG_STATE_HOME=" + dir, "XDG_CACHE_HOME=" + dir}
	tests := []struct {
		args   []string
		code   int
		stdout string // substrings
		stderr string
	}{
		{[]string{"ledgr"}, exitUsage, "", `unknown command "ledgr"; did you mean ledger?`},
		{[]string{"prob", "--config", "x"}, exitUsage, "", "did you mean probe?"},
		{[]string{"npx", "-y", "server"}, exitUsage, "", "a server goes after --: mcpshim [flags] -- npx -y server"},
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
		{[]string{"help"}, 0, `"command": "` + builtShim(t) + `"`, ""},
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

// TestBashCompletion sources the bash script and completes as bash would:
// subcommands from the script, flags from the binary's own help.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	shim := builtShim(t)
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"pro"}, "probe"},
		{[]string{"ledger", "s"}, "show stats"},
		{[]string{"probe", "--ti"}, "--timeout"},
		{[]string{"ledger", "show", "--js"}, "--json"},
		{[]string{"wrap", "--dry"}, "--dry-run"},
		{[]string{"--capt"}, "--capture"},
		{[]string{"completion", "z"}, "zsh"},
	}
	for _, tt := range tests {
		words := append([]string{"mcpshim"}, tt.words...)
		script := `source <("$SHIM" completion bash); mcpshim() { "$SHIM" "$@"; }; COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=` +
			strconv.Itoa(len(words)-1) + `; _mcpshim; echo "${COMPREPLY[*]}"`
		cmd := exec.Command(bash, "-c", script)
		cmd.Env = []string{"SHIM=" + shim, "PATH=" + filepath.Dir(shim) + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != tt.want {
			t.Errorf("completing %q: %q, %v; want %q", words, got, err, tt.want)
		}
	}
	for _, sh := range []string{"zsh", "fish"} {
		code, stdout, _ := runBuilt(t, t.TempDir(), nil, "completion", sh)
		if code != 0 || !strings.Contains(stdout, "ledger probe lock auth wrap unwrap demo completion help version") {
			t.Errorf("completion %s: exit %d, script lacks the subcommands:\n%s", sh, code, stdout)
		}
		if path, err := exec.LookPath(sh); err == nil && sh == "zsh" {
			if out, err := exec.Command(path, "-n", "-c", stdout).CombinedOutput(); err != nil {
				t.Errorf("zsh -n on the script: %v\n%s", err, out)
			}
		}
		if path, err := exec.LookPath(sh); err == nil && sh == "fish" {
			// fish completes a command line without a terminal: complete -C.
			script := filepath.Join(t.TempDir(), "mcpshim.fish")
			os.WriteFile(script, []byte(stdout), 0o600)
			for _, tt := range tests[:4] {
				cmd := exec.Command(path, "-c", "source "+script+"; complete -C '"+strings.Join(append([]string{"mcpshim"}, tt.words...), " ")+"'")
				cmd.Env = []string{"PATH=" + filepath.Dir(shim) + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
				cmd.Dir = t.TempDir()
				out, err := cmd.CombinedOutput()
				var got []string
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					got = append(got, strings.SplitN(l, "\t", 2)[0])
				}
				if err != nil || strings.Join(got, " ") != tt.want {
					t.Errorf("fish completing %q: %q, %v; want %q", tt.words, got, err, tt.want)
				}
			}
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ word, want string }{
		{"ledgr", "ledger"}, {"shwo", "show"}, {"lokc", "lock"}, {"prbe", "probe"}, {"wrpa", "wrap"},
		{"zzz", ""}, {"x", ""}, {"deploy", ""}, {"ledger", "ledger"},
	}
	for _, tt := range tests {
		if got := suggest(tt.word, append(subcommands, "show")); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// A mistyped run id is answered with the nearest one.
func TestResolveSuggestsRun(t *testing.T) {
	runs := []report.Run{{ID: "run_01M8M1PB3XA4N8"}, {ID: "run_01M8M1QZZZZZZZ"}}
	_, err := resolve(runs, "01M8M1PB3YA4")
	if err == nil || !strings.Contains(err.Error(), "did you mean run_01M8M1PB3XA4N8?") {
		t.Errorf("resolve(01M8M1PB3YA4) = %v, want a suggestion of run_01M8M1PB3XA4N8", err)
	}
	if _, err := resolve(runs, "ABCDEFGH"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("resolve(ABCDEFGH) = %v, want no such run and no suggestion", err)
	}
}
