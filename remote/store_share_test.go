package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// echoCall is a tools/call of echo with its message.
func echoCall(id int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, msg)
}

// keptRecord is what the token store holds for srv (dynamic registration).
func keptRecord(t *testing.T, config string, srv *oauthtest.Servers) *oauth.Record {
	t.Helper()
	store := &oauth.Store{Dir: filepath.Join(config, "mcpshim", "auth")}
	rec, err := store.Load(srv.MCPURL(), oauth.ClientKey("", ""))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// waitRecord waits until the store's token is no longer the one given.
func waitStoreChange(t *testing.T, config string, srv *oauthtest.Servers, from string) *oauth.Record {
	t.Helper()
	for end := time.Now().Add(deadline); ; time.Sleep(20 * time.Millisecond) {
		rec := keptRecord(t, config, srv)
		if rec.Token != nil && rec.Token.AccessToken != from {
			return rec
		}
		if time.Now().After(end) {
			t.Fatalf("the store's token stayed %s…", from[:6])
		}
	}
}

// TestRotatedRefreshTokenShared: two shims of one server share the token
// store. B refreshes (RT-1 becomes RT-2, the fixture rotates); once that
// token expires too, A refreshes with what the store holds, RT-2, not its
// own spent RT-1: replaying a rotated token revokes the whole family
// (OAuth 2.1 §4.3.1) and signed everyone out, then A erased RT-2 and opened
// a second browser sign-in. Shown to fail before the fix: 2 authorization
// requests, "refresh token reused: family 1 revoked" in the server's log.
func TestRotatedRefreshTokenShared(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{TokenLife: 2 * time.Second})
	config, dir := t.TempDir(), t.TempDir()
	a := signedInShim(t, srv, config, filepath.Join(dir, "a.jsonl"))
	first := keptRecord(t, config, srv)
	ledgerB := filepath.Join(dir, "b.jsonl")
	cmdB := shimCommand(t, ledgerB, "--url", srv.MCPURL())
	b := startRaw(t, cmdB, "XDG_CONFIG_HOME="+config, "BROWSER=false")
	b.send(initialize)
	if m := b.answer(1); m["result"] == nil {
		t.Fatalf("B's initialize with the kept token got %v\n%s", m, stderrOf(cmdB))
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	waitExpired(t, config, srv)
	b.send(echoCall(2, "b"))
	if m := b.answer(2); m["result"] == nil {
		t.Fatalf("B's call after expiry got %v\n%s", m, stderrOf(cmdB))
	}
	second := waitStoreChange(t, config, srv, first.Token.AccessToken)
	if second.Token.RefreshToken == first.Token.RefreshToken {
		t.Fatalf("B's refresh kept RT-1: the fixture rotates\n%s", srv.Log())
	}
	waitExpired(t, config, srv)
	a.send(echoCall(2, "a"))
	if m := a.answer(2); m["result"] == nil {
		t.Fatalf("A's call after B rotated the refresh token got %v\n%s\n%s", m, stderrOf(a.cmd), srv.Log())
	}
	if n := len(srv.Authorize()); n != 1 {
		t.Errorf("%d authorization requests (browser sign-ins), want 1: A should refresh with the store's RT-2\n%s", n, srv.Log())
	}
	if strings.Contains(srv.Log(), "revoked") {
		t.Errorf("the server saw a rotated refresh token replayed:\n%s", srv.Log())
	}
	third := keptRecord(t, config, srv)
	if third.Token == nil || third.Token.RefreshToken == second.Token.RefreshToken || third.Token.RefreshToken == first.Token.RefreshToken {
		t.Errorf("the store after A's refresh holds %+v, want RT-3 (neither RT-1 nor RT-2)", third.Token)
	}
	// The store's token still works for B, which has no browser.
	waitExpired(t, config, srv)
	b.send(echoCall(3, "b again"))
	if m := b.answer(3); m["result"] == nil {
		t.Errorf("B's call after A's refresh got %v\n%s", m, stderrOf(cmdB))
	}
	if out := os.Getenv("MCPSHIM_TEST_STORE_OUT"); out != "" {
		data, _ := json.MarshalIndent(shape(keptRecord(t, config, srv)), "", "  ")
		os.WriteFile(out, data, 0o600)
	}
	a.in.Close()
	b.in.Close()
	a.exitCode()
	b.exitCode()
}

// shape is a record with its tokens' values cut to their first characters,
// for the notes.
func shape(r *oauth.Record) *oauth.Record {
	c := *r
	if r.Token != nil {
		t := *r.Token
		t.AccessToken, t.RefreshToken = t.AccessToken[:6]+"…", t.RefreshToken[:6]+"…"
		c.Token = &t
	}
	c.Clients = nil
	return &c
}

// authCommand runs mcpshim auth with the shared config directory.
func authCommand(t *testing.T, config string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shim, append([]string{"auth"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "BROWSER="+shim+" fixture browser --url %s")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpshim auth %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestLogoutNotUndone: mcpshim auth logout while a shim runs, at an
// authorization server that offers no revocation (so the refresh token
// still works). The shim's next request finds the store empty: it stops
// using the tokens and says so, and writes nothing back. Once the person
// signs in again with mcpshim auth login, the shim takes that token. Shown
// to fail before the fix: the shim's refresh wrote the tokens back.
func TestLogoutNotUndone(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{TokenLife: 2 * time.Second, NoRevocation: true})
	config := t.TempDir()
	ledger := filepath.Join(t.TempDir(), "a.jsonl")
	a := signedInShim(t, srv, config, ledger)
	waitExpired(t, config, srv) // the shim's next request refreshes
	out := authCommand(t, config, "logout", srv.MCPURL())
	if !strings.Contains(out, "signed out of") {
		t.Fatalf("logout said %q", out)
	}
	a.send(echoCall(2, "after logout"))
	m := a.answer(2)
	if msg := errorMessage(m); !strings.Contains(msg, "mcpshim auth logout") || !strings.Contains(msg, "mcpshim auth login --url "+srv.MCPURL()) {
		t.Errorf("a call after logout got %v, want an error saying the sign-in was removed and what to run\n%s", m, stderrOf(a.cmd))
	}
	if rec := keptRecord(t, config, srv); rec.Token != nil {
		t.Errorf("the running shim wrote a token back after logout\n%s", srv.Log())
	}
	if n := len(srv.Authorize()); n != 1 {
		t.Errorf("%d authorization requests after logout, want 1: a signed-out shim opens no browser on its own", n)
	}
	authCommand(t, config, "login", "--url", srv.MCPURL())
	a.send(echoCall(3, "signed in again"))
	if m := a.answer(3); m["result"] == nil {
		t.Errorf("a call after mcpshim auth login got %v, want the new token used\n%s", m, stderrOf(a.cmd))
	}
	if n := len(srv.Authorize()); n != 2 {
		t.Errorf("%d authorization requests, want 2 (the first sign-in, auth login)", n)
	}
	a.in.Close()
	a.exitCode()
	if !strings.Contains(stderrOf(a.cmd), "removed from the token store") {
		t.Errorf("stderr does not say the sign-in was removed:\n%s", stderrOf(a.cmd))
	}
	for _, r := range events(readLedger(t, ledger), "auth_failed") {
		if r.str("stage") == "store" && strings.Contains(r.str("message"), "mcpshim auth logout") {
			return
		}
	}
	t.Errorf("no auth_failed stage=store in the ledger\n%s", eventList(readLedger(t, ledger)))
}
