package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunnerInstallNotSignalled: a package runner that has not answered the
// handshake may be installing; when the client leaves, the shim closes its
// stdin and lets it finish, with no SIGTERM or SIGKILL (on Windows no
// CTRL_BREAK_EVENT or end of its job) after --kill-grace. The stand-in
// `npx` (the shim's binary under that name, running `fixture sleep`)
// ignores stdin and finishes its "install" in a second.
func TestRunnerInstallNotSignalled(t *testing.T) {
	npx := filepath.Join(t.TempDir(), "npx"+filepath.Ext(builtShim(t)))
	b, err := os.ReadFile(builtShim(t))
	if err == nil {
		err = os.WriteFile(npx, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, true, []string{"--kill-grace", "100ms", "--restart", "never"}, npx, "fixture", "sleep", "--for", "1s")
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
