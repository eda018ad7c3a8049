package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunnerInstallNotSignalled: a package runner that has not answered the
// handshake may be installing; when the client leaves, the shim closes its
// stdin and lets it finish, with no SIGTERM or SIGKILL after --kill-grace.
// The stand-in `npx` ignores stdin and finishes its "install" in a second.
func TestRunnerInstallNotSignalled(t *testing.T) {
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	os.WriteFile(npx, []byte("#!/bin/sh\ntrap 'echo got SIGTERM >&2; exit 143' TERM\nsleep 1\necho installed >&2\n"), 0o755)
	s := start(t, true, []string{"--kill-grace", "100ms", "--restart", "never"}, npx, "-y", "some-server")
	waitEvent(t, s.ledger, "spawned", eventWait)
	if got := s.finish(); got != 0 {
		t.Errorf("exit status %d, want 0: the runner finished by itself\n%s", got, s.stderr)
	}
	if k := find(s.entries(), "kill_requested"); k != nil {
		t.Errorf("kill_requested %s for a runner that may be installing, want none", k.Str("signal"))
	}
	ex := find(s.entries(), "exited")
	if ex == nil || ex.Str("signal") != "" {
		t.Errorf("exited = %+v, want the runner's own exit", ex)
	}
}
