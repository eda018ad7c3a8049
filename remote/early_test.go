package remote_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRequestDuringBackoffTriesNow: the server goes down and comes back on
// the same port long before the next scheduled attempt (--backoff 30s). A
// call during the backoff is a reason to try now: one early attempt, the
// outage ends, and that call is answered. While the server is still down,
// a call gets an error saying when the server was last tried. Shown to
// fail before the fix: every call until the scheduled attempt failed at
// once with "next attempt in 29.9s".
func TestRequestDuringBackoffTriesNow(t *testing.T) {
	var ran counters
	handler := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	}
	s := serve(t, "127.0.0.1:0", handler())
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--backoff", "30s", "--backoff-max", "60s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.stop()
	c.send(echoCall(2, "down"))
	c.answer(2)
	waitEvent(t, ledger, "reconnect_scheduled", 1)
	c.send(echoCall(3, "still down"))
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "last tried") || !strings.Contains(msg, "not sent") {
		t.Errorf("a call while the server is still down got %q, want when it was last tried", msg)
	}
	serve(t, s.addr, handler())
	c.send(echoCall(4, "back"))
	if a := c.answer(4); a["result"] == nil {
		t.Fatalf("a call once the server is back, 30 s before the scheduled attempt, got %v\nstderr:\n%s", a, stderrOf(c.cmd))
	}
	c.in.Close()
	c.exitCode()
	if n := ran.get("echo:back"); n != 1 {
		t.Errorf("echo:back ran %d times, want 1", n)
	}
	recs := readLedger(t, ledger)
	if n := len(events(recs, "outage_ended")); n != 1 {
		t.Errorf("%d outage_ended, want 1\n%s", n, eventList(recs))
	}
}

// TestGiveUpAfterBoundsRetryAfter: a server that answers every call with
// 503 and Retry-After: 60, and --give-up-after 2s. The next attempt is
// scheduled no later than the bound, and the shim gives up (exit 69) then,
// not after the minute the server asked for. Shown to fail before the fix:
// reconnect_scheduled delay_ms=60000 and the exit came at 60 s.
func TestGiveUpAfterBoundsRetryAfter(t *testing.T) {
	s := hostile(t, map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"echo": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Retry-After", "60")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--give-up-after", "2s"))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "echo"))
	c.answer(2)
	r := waitEvent(t, ledger, "reconnect_scheduled", 1)[0]
	if d, _ := r["delay_ms"].(float64); d > 2000 {
		t.Errorf("reconnect_scheduled delay_ms=%v past --give-up-after 2s", d)
	}
	s.stop() // the attempt fails: the bound has passed
	if code := c.exitCode(); code != 69 {
		t.Errorf("exit %d, want 69 (gave up)", code)
	}
}
