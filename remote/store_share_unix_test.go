//go:build !windows

package remote_test

import (
	"fmt"
	"net/http"
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

// TestURLSecretsStayOut: a 2025-03-26 server (no resource metadata, no
// authorization server metadata) at a --url with a password and an
// ?api_key=. The resource indicator is derived without them, and neither
// reaches the browser's argv (the authorization URL) nor auth login's
// output. Shown to fail before the fix: resource= carried the whole URL.
// Unix only: the browser is a sh script that writes its argv.
func TestURLSecretsStayOut(t *testing.T) {
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="old"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		http.NotFound(w, r)
	}))
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	browser := filepath.Join(dir, "browser")
	os.WriteFile(browser, []byte("#!/bin/sh\necho \"$@\" > "+argv+"\n"), 0o755)
	u := "http://user:" + userSecret + "@" + s.addr + "/mcp?api_key=" + querySecret
	login := exec.Command(shim, "auth", "login", "--url", u, "--oauth-client-id", "pub", "--oauth-timeout", "2s")
	login.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+browser)
	out, _ := login.CombinedOutput()
	opened, err := os.ReadFile(argv)
	if err != nil {
		t.Fatalf("the browser was not opened: %v\n%s", err, out)
	}
	if !strings.Contains(string(opened), "resource=http%3A%2F%2F"+strings.ReplaceAll(s.addr, ":", "%3A")+"%2Fmcp&") {
		t.Errorf("the authorization URL's resource is not the URL without userinfo and query:\n%s", opened)
	}
	for _, secret := range []string{userSecret, querySecret} {
		if strings.Contains(string(opened), secret) || strings.Contains(string(out), secret) {
			t.Errorf("%s reached the browser's argv or auth login's output:\nargv: %s\noutput: %s", secret, opened, out)
		}
	}
}
