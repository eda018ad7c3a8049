//go:build !windows

package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestOAuthSignInOutlivesTheClient: the client gives up during the browser
// step and leaves; the shim stays until the person finishes, keeps the
// token, and the next connection needs no browser. Unix only: the person
// coming back later is a sh script standing in for the browser.
func TestOAuthSignInOutlivesTheClient(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{})
	config, dir := t.TempDir(), t.TempDir()
	// The person comes back to the browser after the client left.
	later := filepath.Join(dir, "browser")
	gate := filepath.Join(dir, "gate")
	os.WriteFile(later, []byte("#!/bin/sh\nwhile [ ! -e "+gate+" ]; do sleep 0.05; done\nexec "+shim+" fixture browser --url \"$1\"\n"), 0o755)
	ledger := filepath.Join(dir, "l.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.MCPURL())
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+config, "BROWSER="+later)
	c.send(initialize)
	waitEvent(t, ledger, "authorization_started", 1)
	c.in.Close() // the client gives up
	waitEvent(t, ledger, "client_disconnected", 1)
	os.WriteFile(gate, nil, 0o600)
	if code := c.exitCode(); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderrOf(cmd))
	}
	if got := eventNames(ledger, t); !strings.HasSuffix(got, "authorized") {
		t.Errorf("events %q, want the sign-in finished after the client left\n%s", got, stderrOf(cmd))
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	tr := oauthShim(t, srv, config, filepath.Join(dir, "next.jsonl"))
	tr.Command.Env = append(tr.Command.Env, "BROWSER=false")
	cs := connect(t, ctx, tr, "")
	defer cs.Close()
	if got, err := echo(ctx, cs, "next"); err != nil || got != "next" || len(srv.Authorize()) != 1 {
		t.Fatalf("the next connection: %q %v, %d authorization requests; want the kept token", got, err, len(srv.Authorize()))
	}
}

// TestSignInWaitIsNoTimeout: a person slower at the browser than
// --request-timeout. The request waits for the sign-in, which is neither
// its timeout nor an outage, and is answered once the person approves. Unix
// only: the slow person is a sh script standing in for the browser.
func TestSignInWaitIsNoTimeout(t *testing.T) {
	r := &restartable{}
	r.fresh()
	srv := oauthtest.Start(t, oauthtest.Options{Handler: r})
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	slow := filepath.Join(dir, "browser")
	os.WriteFile(slow, []byte("#!/bin/sh\nwhile [ ! -e "+gate+" ]; do sleep 0.05; done\nexec "+shim+" fixture browser --url \"$1\"\n"), 0o755)
	ledger := filepath.Join(dir, "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.MCPURL(), "--request-timeout", "1s")
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+slow)
	c.send(initialize)
	waitEvent(t, ledger, "authorization_started", 1)
	time.Sleep(2 * time.Second) // the person reads the page: longer than --request-timeout
	os.WriteFile(gate, nil, 0o600)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize after a slow sign-in got %v\n%s", a, stderrOf(cmd))
	}
	c.in.Close()
	c.exitCode()
	recs := readLedger(t, ledger)
	for _, e := range []string{"reconnect_scheduled", "outage_paged", "pending_failed"} {
		if n := len(events(recs, e)); n != 0 {
			t.Errorf("%d %s while a request waited for a sign-in\n%s", n, e, eventList(recs))
		}
	}
}
