//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

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
		if code != 0 || !strings.Contains(stdout, "ledger probe lock wrap unwrap demo completion help version") {
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
