package remote_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyServer speaks the 2024-11-05 HTTP+SSE transport as the TypeScript
// SDK's SSEServerTransport does: GET /sse names /message?sessionId=… in an
// endpoint event, each POST there gets 202, and every answer comes on the
// stream. The tool "hang" is never answered.
func legacyServer(t *testing.T, session string) *httpServer {
	out := make(chan string, 16)
	return serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: /message?sessionId=%s\n\n", session)
			w.(http.Flusher).Flush()
			for {
				select {
				case m := <-out:
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == "/message" && r.URL.Query().Get("sessionId") == session:
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			json.Unmarshal(body, &req)
			w.WriteHeader(http.StatusAccepted)
			switch {
			case req.ID == nil || req.Params.Name == "hang":
			case req.Method == "initialize":
				out <- `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`
			default:
				out <- `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"fine"}]}}`
			}
		default:
			http.NotFound(w, r)
		}
	}))
}

// TestLegacyTransport: through --transport sse, answers come on the stream;
// a request the server never answers gets the request timeout's error and
// the session goes on; the session id in the endpoint's query is kept out
// of the ledger and stderr.
func TestLegacyTransport(t *testing.T) {
	const session = "legacy-session-secret-4711"
	s := legacyServer(t, session)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", "http://"+s.addr+"/sse", "--transport", "sse", "--request-timeout", "2s"))
	c.send(initialize)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize over HTTP+SSE: %v\nstderr:\n%s", a, stderrOf(c.cmd))
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(call(2, "fine"))
	if a := c.answer(2); a["result"] == nil {
		t.Fatalf("tools/call: %v", a)
	}
	c.send(call(3, "hang"))
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "request timeout") {
		t.Errorf("the unanswered call got %q, want the request timeout", msg)
	}
	c.send(call(4, "fine"))
	if a := c.answer(4); a["result"] == nil {
		t.Fatalf("tools/call after the timeout: %v", a)
	}
	c.in.Close()
	c.exitCode()
	waitEvent(t, ledger, "sse_endpoint", 1)
	data, _ := os.ReadFile(ledger)
	if strings.Contains(string(data), session) || strings.Contains(stderrOf(c.cmd), session) {
		t.Errorf("the endpoint's session id reached the ledger or stderr")
	}
	if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled: a timeout is no outage", n)
	}
}
