package remote_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestIdempotencyKeyNotReplayed: with an Idempotency-Key header, Go's HTTP
// client re-sends a POST by itself when a kept-alive connection drops after
// the request was written. The server below runs the call, then drops the
// connection without answering: the call must run once, and the client be
// told it was not re-sent.
func TestIdempotencyKeyNotReplayed(t *testing.T) {
	for _, header := range []string{"Idempotency-Key", "X-Idempotency-Key", "idempotency-key"} {
		t.Run(header, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Int32
			s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
				"drop": func(w http.ResponseWriter, r *http.Request, id string) {
					ran.Add(1)
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
				},
			})
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--header", header+": k-1"))
			c.send(initialize)
			c.answer(1) // the connection is now kept alive
			c.send(call(2, "drop"))
			a := c.answer(2)
			if msg := errorMessage(a); !strings.Contains(msg, "not re-sent") || !strings.Contains(msg, "closed the connection") {
				t.Errorf("the dropped call got %q, want an error saying the server closed the connection and it is not re-sent", msg)
			}
			if code := a["error"].(map[string]any)["code"]; code != -31000.0 {
				t.Errorf("the shim's error has code %v, want -31000 (the shim's own, as on the stdio path)", code)
			}
			if n := ran.Load(); n != 1 {
				t.Errorf("the server ran the call %d times, want 1", n)
			}
		})
	}
}

// TestOneAnswerPerID: request 2's stream also carries request 3's answer,
// and request 3's own stream carries it again; a batch answer holds two
// answers for one id; answers to ids the client never sent, and one with no
// id, come too. The client gets exactly one answer per request and nothing
// else.
func TestOneAnswerPerID(t *testing.T) {
	third := make(chan struct{})
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"first": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			<-third
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"from\":\"stream 2\"}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"no id\"}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"from\":\"stream 2\"}}\n\n", id)
		},
		"second": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			close(third)
			time.Sleep(200 * time.Millisecond) // stream 2 answers first (the test does not depend on it)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"from\":\"stream 3\"}}\n\n", id)
		},
		"batch": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `[{"jsonrpc":"2.0","id":%s,"result":{"n":1}},{"jsonrpc":"2.0","id":%s,"result":{"n":2}}]`, id, id)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "first"))
	c.send(call(3, "second"))
	c.send(call(4, "batch"))
	for end := time.Now().Add(deadline); len(events(readLedger(t, ledger), "late_response_dropped")) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("want 2 late_response_dropped:\n%s", eventList(readLedger(t, ledger)))
		}
	}
	c.in.Close()
	c.exitCode()
	counts := map[string]int{}
	for m := range c.lines { // c.answer consumed 1
		batch := []map[string]any{m}
		if raw, ok := m["not_json"].(string); ok {
			batch = nil
			if err := json.Unmarshal([]byte(raw), &batch); err != nil {
				t.Errorf("the client got a line that is not JSON-RPC: %q", raw)
			}
		}
		for _, e := range batch {
			counts[fmt.Sprint(e["id"])]++
		}
	}
	want := map[string]int{"2": 1, "3": 1, "4": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("answers per id: got %v, want %v (nothing for 99, nothing without an id)", counts, want)
	}
}
