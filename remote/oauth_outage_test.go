package remote_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// restartable is an MCP server behind the strict authorization server that
// can go down (503 to everything) and come back having forgotten its
// sessions, as a redeployed server does.
type restartable struct {
	ran   counters
	down  atomic.Bool
	inner atomic.Pointer[http.Handler]
}

func (r *restartable) fresh() {
	h := http.Handler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&r.ran, nil) }, nil))
	r.inner.Store(&h)
}

func (r *restartable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.down.Load() {
		http.Error(w, "deploying", http.StatusServiceUnavailable)
		return
	}
	(*r.inner.Load()).ServeHTTP(w, req)
}

func signedInShim(t *testing.T, srv *oauthtest.Servers, config, ledger string, args ...string) *rawClient {
	cmd := shimCommand(t, ledger, append([]string{"--url", srv.MCPURL()}, args...)...)
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+config, "BROWSER="+shim+" fixture browser --url %s")
	c.send(initialize)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize after signing in got %v\n%s\n%s", a, stderrOf(cmd), srv.Log())
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Its POST is answered before the test takes the server down: sent
	// after, it met the 503 as a second failure (seen at load ~100).
	waitRecord(t, ledger, "the notifications/initialized exchange", func(r record) bool {
		return r.str("event") == "http_exchange" && r.str("method") == "notifications/initialized"
	})
	return c
}

// TestOutageReplaySignsIn: the server goes down and comes back having
// forgotten its sessions and every token. The reconnect's replayed
// handshake meets a 401: it signs in again (the refresh token is revoked,
// so through the browser) and the outage ends; the 401 counts no failure
// and pages nobody. Counted as a failed attempt, it kept the bridge down,
// retrying and paging, for as long as the client stayed.
func TestOutageReplaySignsIn(t *testing.T) {
	r := &restartable{}
	r.fresh()
	srv := oauthtest.Start(t, oauthtest.Options{Handler: r, Scopes: []string{"mcp:tools"}, ScopeInChallenge: true})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := signedInShim(t, srv, t.TempDir(), ledger, "--backoff", "100ms")
	r.down.Store(true)
	c.send(call(2, "echo"))
	if msg := errorMessage(c.answer(2)); msg == "" {
		t.Fatal("the call to a server down for a deploy got no error")
	}
	waitEvent(t, ledger, "reconnect_scheduled", 1)
	srv.RevokeRefresh()
	r.fresh()
	r.down.Store(false)
	ended := waitEvent(t, ledger, "outage_ended", 1)[0]
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"back"}}}`)
	if a := c.answer(3); a["result"] == nil {
		t.Fatalf("the call after the server came back got %v\nstderr:\n%s\n%s", a, stderrOf(c.cmd), srv.Log())
	}
	c.in.Close()
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit %d after the client left, want 0", code)
	}
	recs := readLedger(t, ledger)
	if f, _ := ended["failures"].(float64); f != 1 {
		t.Errorf("outage_ended failures=%v, want 1: the 401 to the replay is no failure\n%s", ended["failures"], eventList(recs))
	}
	if n := len(events(recs, "outage_paged")); n != 0 {
		t.Errorf("%d outage_paged for one failure and a sign-in", n)
	}
	if n := len(events(recs, "authorized")); n != 2 {
		t.Errorf("%d authorized, want 2 (the first sign-in, the one after the restart)\n%s", n, eventList(recs))
	}
	if n := r.ran.get("echo:back"); n != 1 {
		t.Errorf("echo:back ran %d times, want 1", n)
	}
}

// TestOAuthEchoedTokenHidden: a server that refuses a signed-in request
// with 403 and quotes the token it was given, in its challenge and its
// body. Signing in cannot help (the scope was granted); the request's
// error, the ledger and stderr carry neither token.
func TestOAuthEchoedTokenHidden(t *testing.T) {
	quoting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="mcp:tools", error_description="token %s may not"`, tok))
		http.Error(w, "forbidden for "+tok, http.StatusForbidden)
	})
	srv := oauthtest.Start(t, oauthtest.Options{Handler: quoting, Scopes: []string{"mcp:tools"}, ScopeInChallenge: true})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.MCPURL())
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+shim+" fixture browser --url %s")
	c.send(initialize)
	a := c.answer(1)
	if errorMessage(a) == "" {
		t.Fatalf("initialize refused with 403 got %v", a)
	}
	c.in.Close()
	c.exitCode()
	issued := srv.Issued()
	if len(issued) == 0 {
		t.Fatalf("no token was issued\n%s", srv.Log())
	}
	data, _ := os.ReadFile(ledger)
	wire := mustJSON(a)
	for _, tok := range issued {
		for where, text := range map[string]string{"the ledger": string(data), "stderr": stderrOf(cmd), "the client's error": wire} {
			if strings.Contains(text, tok) {
				t.Errorf("%s holds a token the server quoted (%s…)", where, tok[:6])
			}
		}
	}
	if !strings.Contains(string(data), `"auth_failed"`) {
		t.Errorf("no auth_failed in the ledger\n%s", data)
	}
}

// TestOutageEndsOnRefusedToken: the server comes back from a deploy
// refusing the token given with --header Authorization. Its 401 to the
// replayed handshake is an answer: the outage ends, and the next call gets
// the refusal and what to do instead of "unreachable" and a page.
func TestOutageEndsOnRefusedToken(t *testing.T) {
	var ran counters
	var down, refuse atomic.Bool
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case down.Load():
			http.Error(w, "deploying", http.StatusServiceUnavailable)
		case refuse.Load():
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			inner.ServeHTTP(w, r)
		}
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, append(credentialArgs(), "--url", s.url(), "--backoff", "100ms")...))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	down.Store(true)
	c.send(call(2, "echo"))
	c.answer(2)
	waitEvent(t, ledger, "reconnect_scheduled", 1)
	refuse.Store(true)
	down.Store(false)
	waitEvent(t, ledger, "outage_ended", 1)
	c.send(call(3, "echo"))
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "401") || !strings.Contains(msg, "--header Authorization was refused") {
		t.Errorf("a call to a server refusing the token got %q, want the 401 and what to do", msg)
	}
	c.in.Close()
	c.exitCode()
	recs := readLedger(t, ledger)
	if n := len(events(recs, "outage_paged")); n != 0 {
		t.Errorf("%d outage_paged: a 401 is an answer, not an outage\n%s", n, eventList(recs))
	}
}
