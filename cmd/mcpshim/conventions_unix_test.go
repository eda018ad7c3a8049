//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/phases"
)

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
				cmd.Env = append([]string{"PATH=" + filepath.Dir(shim) + ":" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state}, testkit.Env()...)
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
