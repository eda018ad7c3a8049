package remote_test

import (
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRequestRightAfterAFailure: a request the client sends the moment it
// read the error of the call that met a failure (issue 34 item 5's window:
// before the loop scheduled the next step) waits for that step's attempt,
// brought forward, and is sent when the server is back. It failed at once
// with "next attempt in 0s". The server fails one call with a 503 per
// round; --backoff 30s, so only the early attempt can answer in time.
func TestRequestRightAfterAFailure(t *testing.T) {
	var ran counters
	release := make(chan struct{})
	defer close(release)
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, release) }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var failNext atomic.Bool
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && failNext.CompareAndSwap(true, false) {
			http.Error(w, "deploying", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--backoff", "30s", "--backoff-max", "30s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitRecord(t, ledger, "the notifications/initialized exchange", func(r record) bool {
		return r.str("event") == "http_exchange" && r.str("method") == "notifications/initialized"
	})
	id := 2
	for round := range 5 {
		// Calls in flight widen the window: the failure answers each of
		// them before it tells the loop.
		waits := ran.get("wait")
		for range 30 {
			c.send(call(id, "wait"))
			id++
		}
		for end := time.Now().Add(deadline); ran.get("wait") < waits+30; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("round %d: the server got %d of 30 calls", round, ran.get("wait")-waits)
			}
		}
		failNext.Store(true)
		c.send(call(id, "echo"))
		if msg := errorMessage(c.answer(float64(id))); msg == "" {
			t.Fatalf("round %d: the call that met the 503 got no error", round)
		}
		c.send(call(id+1, "echo"))
		if a := c.answer(float64(id + 1)); a["result"] == nil {
			t.Fatalf("round %d: the call sent right after the failure got %v, want it sent once the server was tried again", round, a)
		}
		waitEvent(t, ledger, "outage_ended", round+1)
		id += 2
	}
	c.in.Close()
	c.exitCode()
}
