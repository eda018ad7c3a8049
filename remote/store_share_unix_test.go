//go:build !windows

package remote_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestLoginSaysWhatItWaitsFor: a shim abandoned at the browser step holds
// the store's lock; mcpshim auth login in a terminal says at once whom it
// waits for (the holder's pid and the lock file), and once that shim dies
// (SIGKILL: no cleanup) its lock goes and the login proceeds. Shown to
// fail before the fix: the login waited without a word. Unix only: the
// person who never comes back is a sh script standing in for the browser.
func TestLoginSaysWhatItWaitsFor(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{})
	config, dir := t.TempDir(), t.TempDir()
	never := filepath.Join(dir, "browser")
	os.WriteFile(never, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755)
	ledger := filepath.Join(dir, "a.jsonl")
	cmdA := shimCommand(t, ledger, "--url", srv.MCPURL())
	a := startRaw(t, cmdA, "XDG_CONFIG_HOME="+config, "BROWSER="+never)
	a.send(initialize)
	waitEvent(t, ledger, "authorization_started", 1)

	login := exec.Command(shim, "auth", "login", "--url", srv.MCPURL())
	login.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "BROWSER="+shim+" fixture browser --url %s")
	errs := &testkit.Buffer{}
	login.Stderr, login.Stdout = errs, errs
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	defer login.Process.Kill()
	want := fmt.Sprintf("waiting for another mcpshim (pid %d since", cmdA.Process.Pid)
	for end := time.Now().Add(deadline); !strings.Contains(errs.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("auth login's output lacks %q after %v:\n%s", want, deadline, errs)
		}
	}
	cmdA.Process.Kill()
	done := make(chan error, 1)
	go func() { done <- login.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(errs.String(), "signed in to "+srv.MCPURL()) {
			t.Errorf("auth login after the holder died: %v\n%s", err, errs)
		}
	case <-time.After(deadline):
		t.Fatalf("auth login still waits after the lock's holder died:\n%s", errs)
	}
}
