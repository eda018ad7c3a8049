package remote_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// quotingTools answer every call quoting the request's credentials back: in
// a JSON-RPC error ("upstream refused ...") and in a result, as servers that
// echo their input do.
func quotingTools(quote func(r *http.Request) string) map[string]func(w http.ResponseWriter, r *http.Request, id string) {
	return map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"refuse": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"upstream refused %s"}}`, id, quote(r))
		},
		"echo": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"you sent %s"}]}}`, id, quote(r))
		},
	}
}

// TestQuotedCredentialsHidden: a server quotes the credentials it was sent
// (--header values, the URL's password and query value) in an error and in
// a result. With --capture full none reaches the ledger or stderr: the
// tracker's records hide them by value, as the bridge's own events do.
// Shown to fail before the fix: the error's message and the result's body
// held the X-Api-Key value and the URL's query value verbatim.
func TestQuotedCredentialsHidden(t *testing.T) {
	s := hostile(t, quotingTools(func(r *http.Request) string {
		// The URL's password is never sent as userinfo: the server quotes
		// it as if it knew it another way.
		return strings.Join([]string{r.Header.Get("X-Api-Key"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.Query().Get("api_key"), userSecret}, " ")
	}))
	u := "http://user:" + userSecret + "@" + s.addr + "/mcp?api_key=" + querySecret
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, append(credentialArgs(), "--capture", "full", "--url", u)...))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "refuse"))
	a2 := c.answer(2)
	c.send(call(3, "echo"))
	c.answer(3)
	c.in.Close()
	c.exitCode()
	// The client gets the server's own answers as they are (the wire is the
	// server's); what the shim writes hides them.
	if l := leaks(t, ledger, stderrOf(c.cmd), nil); len(l) > 0 {
		data, _ := os.ReadFile(ledger)
		t.Errorf("leaked: %s\n%s", strings.Join(l, ", "), data)
	}
	if !strings.Contains(errorMessage(a2), keySecret) {
		t.Errorf("the client's copy of the server's error was changed: %v", a2)
	}
}

// TestQuotedOAuthTokenHidden: a signed-in server echoes the access token in
// a result and an error; with --capture full the ledger and stderr hold
// neither, nor any token or code the sign-in used.
func TestQuotedOAuthTokenHidden(t *testing.T) {
	tokenOf := func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }
	srv := oauthtest.Start(t, oauthtest.Options{Handler: hostileHandler(quotingTools(tokenOf))})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--capture", "full", "--url", srv.MCPURL())
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+shim+" fixture browser --url %s")
	c.send(initialize)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize got %v\n%s", a, stderrOf(cmd))
	}
	c.send(call(2, "refuse"))
	c.answer(2)
	c.send(call(3, "echo"))
	c.answer(3)
	c.in.Close()
	c.exitCode()
	data, _ := os.ReadFile(ledger)
	for _, s := range secretsOf(srv) {
		if strings.Contains(string(data), s) || strings.Contains(stderrOf(cmd), s) {
			t.Errorf("a token or code the server quoted reached the ledger or stderr: %s…", s[:6])
		}
	}
}

// TestCutStreamFailsOnlyItsRequest: call 3's stream is healthy and slow;
// call 2's ends before its answer. Call 2 gets its error, call 3 its
// answer when it comes: a cut stream is no outage (the server is there,
// it answers the other stream). Shown to fail before the fix: call 3 got
// "became unreachable before answering" at once and the bridge scheduled a
// reconnect.
func TestCutStreamFailsOnlyItsRequest(t *testing.T) {
	release := make(chan struct{})
	s := hostile(t, map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"cut": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": working\n\n")
			w.(http.Flusher).Flush()
		},
		"slow": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": working\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"slow done\"}]}}\n\n", id)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(3, "slow"))
	waitRecord(t, ledger, "call 3 sent", func(r record) bool {
		return r.str("event") == "http_exchange" && r.str("request_id") == "3"
	})
	c.send(call(2, "cut"))
	if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "broke off") {
		t.Errorf("the cut call got %q, want an error saying its answer broke off", msg)
	}
	close(release)
	if a := c.answer(3); a["result"] == nil {
		t.Errorf("the healthy call got %v, want its answer", a)
	}
	c.in.Close()
	c.exitCode()
	recs := readLedger(t, ledger)
	for _, e := range []string{"reconnect_scheduled", "outage_paged"} {
		if n := len(events(recs, e)); n != 0 {
			t.Errorf("%d %s for one cut stream\n%s", n, e, eventList(recs))
		}
	}
}

// TestCutStreamResumed: a stateless server (no session) gives event ids;
// its stream is cut before the answer, and the GET with Last-Event-ID gets
// the rest: the call is answered, not failed.
func TestCutStreamResumed(t *testing.T) {
	inner := hostileHandler(map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"cut": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "retry: 10\nid: ev-"+id+"\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
		},
	})
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if last := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && last != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			id := strings.TrimPrefix(last, "ev-")
			fmt.Fprintf(w, "id: ev-%s-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id, id)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "cut"))
	if a := c.answer(2); a["result"] == nil {
		t.Errorf("the cut call got %v, want the answer the resumed stream gave\n%s", a, stderrOf(c.cmd))
	}
	c.in.Close()
	c.exitCode()
}

// TestShimErrorsEscapeServerText: a server answers 400 with a body holding
// a terminal escape (an OSC title set) and a bidi override. The shim's own
// error to the client quotes the body: it carries them shown, never raw,
// as stderr and the ledger already do. Shown to fail before the fix: the
// error's data held ESC and U+202E as they were.
func TestShimErrorsEscapeServerText(t *testing.T) {
	s := hostile(t, map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"echo": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "{\"error\":\"bad \x1b]0;pwned\x07 request \u202eexe.txt\"}")
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "echo"))
	a := c.answer(2)
	c.in.Close()
	c.exitCode()
	e, _ := a["error"].(map[string]any)
	if e == nil {
		t.Fatalf("the call got %v, want the shim's error", a)
	}
	text := fmt.Sprint(e["message"], e["data"])
	if strings.ContainsAny(text, "\x1b\x07\u202e") {
		t.Errorf("the shim's error carries raw control or bidi characters: %q", text)
	}
	if !strings.Contains(text, "request") {
		t.Errorf("the shim's error lost the server's text: %q", text)
	}
}
