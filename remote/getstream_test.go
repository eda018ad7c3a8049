package remote_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestGETStreamKeepsTrying: the session's GET stream is refused with 503
// twice, its connection is dropped once, and it ends three times with no
// event (as a server restarting behind a proxy does) before it works. The
// bridge keeps asking, backing off as the reconnect policy says, and the
// client gets the server's notification; no request failed and nobody was
// paged. It gave up at the first 503, or after three empty streams, until
// the next session.
func TestGETStreamKeepsTrying(t *testing.T) {
	var gets atomic.Int32
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch n := gets.Add(1); {
			case n <= 2:
				http.Error(w, "restarting", http.StatusServiceUnavailable)
			case n == 3:
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			case n <= 6:
				w.Header().Set("Content-Type", "text/event-stream")
			default:
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "s-1")
		if !strings.Contains(string(body), `"id"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"flaky-get","version":"1"}}}`)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--backoff", "50ms"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for timeout := time.After(deadline); ; {
		select {
		case m := <-c.lines:
			if m["method"] != "notifications/tools/list_changed" {
				continue
			}
		case <-timeout:
			t.Fatalf("the server's notification never came: %d GETs\n%s", gets.Load(), eventList(readLedger(t, ledger)))
		}
		break
	}
	c.in.Close()
	c.exitCode()
	recs := readLedger(t, ledger)
	for _, e := range []string{"reconnect_scheduled", "outage_paged", "pending_failed"} {
		if n := len(events(recs, e)); n != 0 {
			t.Errorf("%d %s: the GET stream fails no request and pages nobody\n%s", n, e, eventList(recs))
		}
	}
}
