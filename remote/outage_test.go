package remote_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOutageRecovers stops the server for good, as a deploy does, and
// brings it back on the same port after the page: requests during the
// outage get an error at once naming the cause, the page comes once on the
// third failure, the bridge never exits, and it recovers by itself.
func TestOutageRecovers(t *testing.T) {
	var ran counters
	handler := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	}
	s := serve(t, "127.0.0.1:0", handler())
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.stop()
	c.send(call(2, "echo"))
	if msg := errorMessage(c.answer(2)); msg == "" {
		t.Fatal("the call to a stopped server got no error")
	}
	waitEvent(t, ledger, "reconnect_scheduled", 1)
	c.send(call(3, "echo"))
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "unreachable") || !strings.Contains(msg, "not sent") {
		t.Errorf("a call during the outage got %q, want an error at once naming the outage", msg)
	}
	waitEvent(t, ledger, "outage_paged", 1)
	serve(t, s.addr, handler())
	waitEvent(t, ledger, "outage_ended", 1)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"back"}}}`)
	if a := c.answer(4); a["result"] == nil {
		t.Fatalf("the call after the server came back got %v\nstderr:\n%s", a, stderrOf(c.cmd))
	}
	c.in.Close()
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit %d after the client left, want 0", code)
	}
	recs := readLedger(t, ledger)
	if n := len(events(recs, "outage_paged")); n != 1 {
		t.Errorf("%d outage_paged, want 1", n)
	}
	if n := len(events(recs, "reconnects_exhausted")); n != 0 {
		t.Errorf("%d reconnects_exhausted: the bridge gave up", n)
	}
	if n := strings.Count(stderrOf(c.cmd), "still retrying"); n != 1 {
		t.Errorf("the page's stderr line appears %d times, want 1:\n%s", n, stderrOf(c.cmd))
	}
	if n := ran.get("echo:back"); n != 1 {
		t.Errorf("echo:back ran %d times, want 1", n)
	}
}

// TestRetryAfter: a 3-second 503 blip with Retry-After: 1 (a deploy behind a
// load balancer). The call that met it gets an error; the next attempt
// waits at least the second the server asked for; the session goes on
// after the blip (it ended the session for good).
func TestRetryAfter(t *testing.T) {
	var ran counters
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var blipUntil atomic.Int64
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().UnixNano() < blipUntil.Load() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "deploying", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	blipUntil.Store(time.Now().Add(3 * time.Second).UnixNano())
	c.send(call(2, "echo"))
	if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "503") {
		t.Errorf("the call during the blip got %q, want the 503", msg)
	}
	r := waitEvent(t, ledger, "reconnect_scheduled", 1)[0]
	if d, _ := r["delay_ms"].(float64); d < 1000 {
		t.Errorf("the first retry after %vms, want at least the 1000ms of Retry-After", d)
	}
	waitEvent(t, ledger, "outage_ended", 1)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}}`)
	if a := c.answer(3); a["result"] == nil {
		t.Fatalf("the call after the blip got %v", a)
	}
	c.in.Close()
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}
