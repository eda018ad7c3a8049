package remote_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

// oauthServers is the strict authorization server in front of a go-sdk MCP
// server that wants the scope mcp:tools.
func oauthServers(t *testing.T, ran *counters, o oauthtest.Options) *oauthtest.Servers {
	o.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(ran, nil) }, nil)
	o.Scopes, o.ScopeInChallenge = []string{"mcp:tools"}, true
	return oauthtest.Start(t, o)
}

// oauthShim is mcpshim --url with its config directory and a browser that
// approves at once.
func oauthShim(t *testing.T, srv *oauthtest.Servers, config, ledger string, args ...string) *mcp.CommandTransport {
	cmd := shimCommand(t, ledger, append([]string{"--url", srv.MCPURL()}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "BROWSER="+shim+" fixture browser --url %s")
	return &mcp.CommandTransport{Command: cmd}
}

func eventNames(path string, t *testing.T) string {
	var names []string
	for _, r := range readLedger(t, path) {
		if e := r.str("event"); strings.Contains(e, "auth") || e == "token_refreshed" {
			names = append(names, e)
		}
	}
	return strings.Join(names, " ")
}

// secretsOf are the values no log may hold: codes, verifiers, tokens,
// client secrets, as the authorization server received and sent them.
func secretsOf(srv *oauthtest.Servers) []string {
	var out []string
	for _, f := range srv.Tokens() {
		for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret"} {
			if v := f.Get(k); v != "" {
				out = append(out, v)
			}
		}
	}
	return append(out, srv.Issued()...)
}

func TestOAuthSignIn(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{})
	config := t.TempDir()
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	tr := oauthShim(t, srv, config, ledger)
	cs := connect(t, ctx, tr, "")
	if got, err := echo(ctx, cs, "signed"); err != nil || got != "signed" {
		t.Fatalf("echo after signing in = %q, %v\nserver: %s\nstderr: %s", got, err, srv.Log(), stderrOf(tr.Command))
	}
	cs.Close()
	if got, want := eventNames(ledger, t), "auth_required authorization_started authorized"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	started := events(readLedger(t, ledger), "authorization_started")[0]
	if started.str("issuer") != srv.Issuer() || started.str("scope") != "mcp:tools" || started.str("resource") != srv.MCPURL() || started.str("client") != oauth.KindRegistered {
		t.Errorf("authorization_started = %v", started)
	}
	if !strings.Contains(stderrOf(tr.Command), "/authorize?") {
		t.Errorf("stderr lacks the authorization URL:\n%s", stderrOf(tr.Command))
	}
	data, _ := os.ReadFile(ledger)
	for _, s := range secretsOf(srv) {
		if strings.Contains(string(data), s) || strings.Contains(stderrOf(tr.Command), s) {
			t.Errorf("a code, token or secret reached the ledger or stderr: %s…", s[:6])
		}
	}
	files, _ := filepath.Glob(filepath.Join(config, "mcpshim", "auth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v, want one", files)
	}
	if err := safefile.CheckPrivate(files[0]); err != nil {
		t.Errorf("token file: %v, want its owner's only (0600 on Unix)", err)
	}

	// The next run uses the kept token: no browser, no authorization request.
	ledger2 := filepath.Join(t.TempDir(), "l.jsonl")
	tr2 := oauthShim(t, srv, config, ledger2)
	tr2.Command.Env = append(tr2.Command.Env, "BROWSER=false")
	cs2 := connect(t, ctx, tr2, "")
	defer cs2.Close()
	if got, err := echo(ctx, cs2, "again"); err != nil || got != "again" {
		t.Fatalf("echo with the kept token = %q, %v", got, err)
	}
	if n := len(srv.Authorize()); n != 1 {
		t.Errorf("authorization requests = %d, want 1", n)
	}
	if got := eventNames(ledger2, t); got != "" {
		t.Errorf("events with a kept token %q, want none", got)
	}
}

// waitExpired waits until the kept token's expiry has passed.
func waitExpired(t *testing.T, config string, srv *oauthtest.Servers) {
	t.Helper()
	store := &oauth.Store{Dir: filepath.Join(config, "mcpshim", "auth")}
	rec, err := store.Load(srv.MCPURL(), oauth.ClientKey("", ""))
	if err != nil || rec.Token == nil {
		t.Fatalf("no kept token: %v", err)
	}
	for end := time.Now().Add(deadline); time.Now().Before(rec.Token.Expiry); {
		if time.Now().After(end) {
			t.Fatal("the token never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOAuthTokenLife: a token's life through the bridge. It expires and is
// refreshed; two shims started on the same expired token refresh it once
// (the fixture rotates refresh tokens and revokes a family whose spent
// token is used again); a revoked refresh token leads to an error that says
// what to run.
func TestOAuthTokenLife(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{TokenLife: time.Second})
	config := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	run := func(name string, args ...string) (string, error, string) {
		ledger := filepath.Join(t.TempDir(), name+".jsonl")
		tr := oauthShim(t, srv, config, ledger, args...)
		cs := connect(t, ctx, tr, "")
		defer cs.Close()
		got, err := echo(ctx, cs, name)
		return got, err, ledger
	}
	if got, err, _ := run("first"); got != "first" {
		t.Fatalf("sign-in: %q %v\n%s", got, err, srv.Log())
	}
	waitExpired(t, config, srv)
	got, err, ledger := run("refreshed")
	if got != "refreshed" || !strings.Contains(eventNames(ledger, t), "token_refreshed") {
		t.Fatalf("after expiry: %q %v, events %q\n%s", got, err, eventNames(ledger, t), srv.Log())
	}

	waitExpired(t, config, srv)
	before := srv.Grants("refresh_token")
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, _ = run("twin")
		}()
	}
	wg.Wait()
	if results[0] != "twin" || results[1] != "twin" || srv.Grants("refresh_token")-before != 1 {
		t.Errorf("two shims on one expired token: %q, %d refreshes; want both answered, one refresh\n%s", results, srv.Grants("refresh_token")-before, srv.Log())
	}

	srv.RevokeRefresh()
	waitExpired(t, config, srv)
	ledger = filepath.Join(t.TempDir(), "revoked.jsonl")
	tr := oauthShim(t, srv, config, ledger, "--oauth-timeout", "2s")
	tr.Command.Env = append(tr.Command.Env, "BROWSER=false") // nobody at the browser
	// The server wants a token for initialize too: the handshake gets the error.
	c := mcp.NewClient(&mcp.Implementation{Name: "remote-test-client", Version: "1.0.0"}, nil)
	if cs, err := c.Connect(ctx, tr, nil); err == nil {
		cs.Close()
		t.Errorf("the handshake after the refresh token was revoked succeeded")
	} else if !strings.Contains(err.Error(), "mcpshim auth login --url "+srv.MCPURL()) {
		t.Errorf("the handshake after the refresh token was revoked: %v; want an error saying to run mcpshim auth login", err)
	}
	recs := readLedger(t, ledger)
	var refresh record
	for _, r := range events(recs, "auth_failed") {
		if r.str("stage") == "refresh" {
			refresh = r
		}
	}
	if refresh == nil || refresh.str("error") != "invalid_grant" || !strings.Contains(refresh.str("message"), "mcpshim auth login") {
		t.Errorf("no auth_failed at stage refresh with invalid_grant and the command to run\n%s", eventList(recs))
	}
}
