package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// runBinary runs the built mcpshim with args and stdin, returning its status,
// stdout and stderr.
func runBinary(t *testing.T, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(builtShim(t), args...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run mcpshim %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestFlagValuesValidated: a bad value is a usage error (64) naming the flag
// and its bounds, never a panic and never a session that silently misbehaves.
func TestFlagValuesValidated(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-observe", "9000000000000000000"}, "--max-observe 9000000000000000000"},
		{[]string{"--max-observe", "1"}, "--max-observe 1"},
		{[]string{"--max-observe", "-5"}, "--max-observe -5"},
		{[]string{"--ledger-max-size", "-1"}, "--ledger-max-size -1"},
		{[]string{"--ledger-max-size", "10"}, "--ledger-max-size 10"},
		{[]string{"--handshake-timeout", "-1s"}, "--handshake-timeout -1s"},
		{[]string{"--kill-grace", "-1s"}, "--kill-grace -1s"},
		{[]string{"--backoff", "-10ms"}, "--backoff -10ms"},
		{[]string{"--backoff-max", "-1m"}, "--backoff-max -1m"},
		{[]string{"--backoff", "1m", "--backoff-max", "1s"}, "--backoff-max 1s"},
		{[]string{"--max-restarts", "-1"}, "--max-restarts -1"},
		{[]string{"--restart-window", "0s"}, "--restart-window 0s"},
		{[]string{"--stable-after", "-1h"}, "--stable-after -1h"},
		{[]string{"--max-observe", "lots"}, "--max-observe lots: want a whole number"},
	}
	for _, tt := range tests {
		args := append(append([]string{"--ledger", "off"}, tt.args...), "--", fixtureBin(t), "fixture", "healthy")
		status, stdout, stderr := runBinary(t, nil, "", args...)
		if status != exitUsage || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "panic") || stdout != "" ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("mcpshim %s: status %d, stderr %q, stdout %q; want status 64 and one line naming %q", strings.Join(args, " "), status, stderr, stdout, tt.want)
		}
	}
	for _, args := range [][]string{{"probe", "--parallel", "-1"}, {"probe", "--retries", "-1"}, {"lock", "--parallel", "100000"}, {"ledger", "tail", "-n", "-1"}} {
		status, _, stderr := runBinary(t, nil, "", args...)
		if status != exitUsage || !strings.Contains(stderr, "want ") || strings.Contains(stderr, "panic") {
			t.Errorf("mcpshim %s: status %d, stderr %q; want status 64 and the bounds", strings.Join(args, " "), status, stderr)
		}
	}
	// The bounds are in --help.
	_, stdout, help := runBinary(t, nil, "", "-h")
	help += stdout
	for _, want := range []string{"65536 to 1073741824", "at least 4096"} {
		if !strings.Contains(help, want) {
			t.Errorf("mcpshim -h does not state the bound %q:\n%s", want, help)
		}
	}
}

// TestNameStaysInLedgerDir: a --name with separators, dots or controls names
// a file inside the ledger directory, never outside it.
func TestNameStaysInLedgerDir(t *testing.T) {
	for _, name := range []string{"../../x", "/etc/passwd", ".hidden", "..", "a/../../b", "evil\x1b]0;t\x07", strings.Repeat("n", 400)} {
		root := t.TempDir()
		state := filepath.Join(root, "state", "deep")
		dir := filepath.Join(root, "dir")
		for _, lpath := range []string{"", dir + "/"} {
			args := []string{"--name", name, "--", fixtureBin(t), "fixture", "healthy"}
			if lpath != "" {
				args = append([]string{"--ledger", lpath}, args...)
			}
			status, _, stderr := runBinary(t, []string{"XDG_STATE_HOME=" + state}, "", args...)
			if status != 0 {
				t.Fatalf("mcpshim %q: status %d, want 0; stderr:\n%s", args, status, stderr)
			}
			want := filepath.Join(state, "mcpshim")
			if lpath != "" {
				want = dir
			}
			var files []string
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if len(files) != 1 || filepath.Dir(files[0]) != want || strings.HasPrefix(filepath.Base(files[0]), ".") || len(filepath.Base(files[0])) > 255 {
				t.Errorf("--name %q --ledger %q wrote %q, want one visible file in %s", name, lpath, files, want)
			}
			os.RemoveAll(root)
		}
	}
}

// TestLedgerUnlinkedOrReplaced: a ledger deleted or renamed while the shim
// runs is noticed, said once on stderr, and reopened at its path, so the
// records that follow are not written into a file nobody can read.
func TestLedgerUnlinkedOrReplaced(t *testing.T) {
	s := start(t, true, nil, "fixture", "healthy")
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	id := 10
	// waitFor calls tools/list until the file at the ledger path has a
	// tools_list_responded for a call made after the move.
	waitFor := func(what string) {
		t.Helper()
		first := id
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			id++
			s.call(strconv.Itoa(id), "tools/list", `{}`)
			data, _ := os.ReadFile(s.ledger)
			for _, line := range bytes.Split(data, []byte("\n")) {
				if e, err := ledger.Decode(line); err == nil && e.Event == phases.ToolsListResponded && e.Str("request_id") != "" {
					if n, _ := strconv.Atoi(e.Str("request_id")); n > first {
						return
					}
				}
			}
			time.Sleep(100 * time.Millisecond) // pacing the calls, not a wait for the assertion
		}
		t.Fatalf("after the ledger was %s, no record reached %s in 30s; stderr:\n%s", what, s.ledger, s.stderr)
	}
	if err := os.Remove(s.ledger); err != nil {
		t.Fatal(err)
	}
	waitFor("deleted")
	if err := os.Rename(s.ledger, s.ledger+".moved"); err != nil {
		t.Fatal(err)
	}
	waitFor("renamed")
	if status := s.finish(); status != 0 {
		t.Fatalf("shim exit status %d, want 0; stderr:\n%s", status, s.stderr)
	}
	if n := strings.Count(s.stderr.String(), "was deleted or replaced"); n != 2 {
		t.Errorf("stderr says the ledger was deleted or replaced %d times, want 2 (once for each):\n%s", n, s.stderr)
	}
}
