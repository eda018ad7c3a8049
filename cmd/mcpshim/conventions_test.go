package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
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

// TestCompletion sources each shell's script in that shell and completes as
// it would: subcommands, flags from the binary's own help, flag values
// (never file names for --restart or --capture), run ids after ledger show,
// file names where a flag takes a path, and after -- the server's command,
// each name once. zsh and fish are required under CI=true.
func TestCompletion(t *testing.T) {
	shim := builtShim(t)
	state := t.TempDir()
	os.Mkdir(filepath.Join(state, "mcpshim"), 0o700)
	appendRun(t, filepath.Join(state, "mcpshim", "fs.jsonl"), "fs", "run_01M8M1PB3X463DGVJ2PBJ7NR5V", 10, lrec{0, phases.Spawned, nil})
	appendRun(t, filepath.Join(state, "mcpshim", "fs.jsonl"), "fs", "run_01M8M1QZ4Y8TQ9V2KJ3M6H7P0A", 11, lrec{0, phases.Spawned, nil})
	files := t.TempDir()
	os.WriteFile(filepath.Join(files, "ledger.jsonl"), nil, 0o600)
	bin := t.TempDir() // a second mcpshim-like command on PATH: listed once
	os.WriteFile(filepath.Join(bin, "mcpshim-uniq"), []byte("#!/bin/sh\n"), 0o755)
	tests := []struct {
		words []string // the last is the word being completed
		want  string
	}{
		{[]string{"pro"}, "probe"},
		{[]string{"ledger", "s"}, "show stats"},
		{[]string{"probe", "--ti"}, "--timeout"},
		{[]string{"ledger", "show", "--js"}, "--json"},
		{[]string{"wrap", "--dry"}, "--dry-run"},
		{[]string{"--capt"}, "--capture"},
		{[]string{"completion", "z"}, "zsh"},
		{[]string{"--restart", ""}, "always never on-failure"},
		{[]string{"--capture", ""}, "full meta"},
		{[]string{"ledger", "--outcome", "EX"}, "EXITED"},
		{[]string{"ledger", "show", ""}, "01M8M1PB 01M8M1QZ"},
		{[]string{"ledger", "why", "01M8M1Q"}, "01M8M1QZ"},
		{[]string{"--ledger", files + "/le"}, files + "/ledger.jsonl"},
		{[]string{"--name", "fs", "--", "mcpshim-un"}, "mcpshim-uniq"},
	}
	shells := []struct {
		name, script string
		argv         func(script string, words []string) []string
	}{
		{"bash", "bash", func(script string, words []string) []string {
			return []string{"bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _mcpshim; printf '%s\n' "${COMPREPLY[@]}"`,
				"bash", script, "mcpshim"}
		}},
		{"zsh", "zsh", func(script string, words []string) []string {
			// compadd and the file and command completers, as zsh's completion
			// system runs them, filtered by the word as zsh would.
			return []string{"zsh", "-fc", `source "$1"; shift
compadd() { shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -r -- $w; done; return 0; }
_files() { compadd -- ${words[CURRENT]}*(N); }
_command_names() { compadd -- ${(k)commands}; }
words=("$@"); CURRENT=$#; _mcpshim`, "zsh", script, "mcpshim"}
		}},
		{"fish", "fish", func(script string, words []string) []string {
			return []string{"fish", "-c", `source $argv[1]; complete -C (string join ' ' -- $argv[2..-1])`, script, "mcpshim"}
		}},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			path := needTool(t, sh.name, sh.name)
			code, stdout, _ := runBuilt(t, t.TempDir(), nil, "completion", sh.name)
			if code != 0 {
				t.Fatalf("completion %s: exit %d", sh.name, code)
			}
			script := filepath.Join(t.TempDir(), "mcpshim."+sh.name)
			os.WriteFile(script, []byte(stdout), 0o600)
			for _, tt := range tests {
				argv := append(sh.argv(script, tt.words), tt.words...)
				cmd := exec.Command(path, argv[1:]...)
				cmd.Env = []string{"PATH=" + filepath.Dir(shim) + ":" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state}
				cmd.Dir = t.TempDir()
				out, err := cmd.CombinedOutput()
				got := strings.Fields(string(out))
				if sh.name == "fish" { // fish adds a description after a tab
					got = nil
					for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
						got = append(got, strings.SplitN(l, "\t", 2)[0])
					}
				}
				for i := range got {
					if strings.HasPrefix(got[i], "01M8M1") { // run ids: enough to tell them apart
						got[i] = got[i][:8]
					}
				}
				slices.Sort(got)
				if err != nil || strings.Join(got, " ") != tt.want {
					t.Errorf("%s completing %q: %q, %v; want %q", sh.name, tt.words, got, err, tt.want)
				}
			}
		})
	}
}

// A mistyped run id is answered with the nearest one.
func TestResolveSuggestsRun(t *testing.T) {
	runs := []report.Run{{Facts: verdict.Facts{ID: "run_01M8M1PB3XA4N8"}}, {Facts: verdict.Facts{ID: "run_01M8M1QZZZZZZZ"}}}
	_, err := resolve(runs, "01M8M1PB3YA4")
	if err == nil || !strings.Contains(err.Error(), "did you mean run_01M8M1PB3XA4N8?") {
		t.Errorf("resolve(01M8M1PB3YA4) = %v, want a suggestion of run_01M8M1PB3XA4N8", err)
	}
	if _, err := resolve(runs, "ABCDEFGH"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("resolve(ABCDEFGH) = %v, want no such run and no suggestion", err)
	}
}
