package remote_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tinyServer is a stateless JSON-only MCP server of a few lines, as people
// put on serverless platforms: no session, no streams, every answer a
// pretty-printed JSON body. Calling "html" answers 200 with a web page, and
// "crash" answers 500.
func tinyServer(t *testing.T, calls *atomic.Int32) *httpServer {
	// The big answer's result, marshalled once: 24 MiB per call took the
	// race-built test server 25-50 s at load ~100.
	bigResultJSON, _ := json.MarshalIndent(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("0123456789abcdef", bigResult/16)}}}, "", "  ")
	return serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "bogus": // an error the server cannot tie to the request
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: bogus"}}`)
			return
		case "ping": // the id respelled, as some serializers do: 7 comes back as 7.0
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s.0,"result":{}}`, req.ID)
			return
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "tiny", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "hello", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			calls.Add(1)
			switch req.Params.Name {
			case "html":
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html><body>maintenance</body></html>\n")
				return
			case "crash":
				http.Error(w, "internal error", http.StatusInternalServerError)
				return
			case "hang": // a server stuck upstream: no headers, ever (until the test ends)
				<-r.Context().Done()
				return
			case "big":
				result = json.RawMessage(bigResultJSON)
			default:
				result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello\nworld"}}}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.MarshalIndent(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}, "", "  ")
		w.Write(append(b, '\n'))
	}))
}

// bigResult is the size of the big tool's text: past the tap's 16 MiB.
const bigResult = 24 << 20

// TestTinyJSONServer: a multi-line JSON body reaches the client as one line,
// compacted; a web page instead of JSON and a 500 each get an error, the 500
// counts as a failure, and no call is sent twice.
func TestTinyJSONServer(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize: %v", a)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}`)
	a := c.answer(2)
	res, _ := a["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != "hello\nworld" {
		t.Fatalf("tools/call hello = %v, want the text hello\\nworld", a)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	big := c.answer(5)
	res, _ = big["result"].(map[string]any)
	content, _ = res["content"].([]any)
	if len(content) != 1 || len(content[0].(map[string]any)["text"].(string)) != bigResult {
		t.Fatalf("the big answer did not arrive whole")
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"html","arguments":{}}}`)
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "text/html") {
		t.Fatalf("a web page for an answer gave %q, want an error naming its content type", msg)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
	if msg := errorMessage(c.answer(4)); !strings.Contains(msg, "500") || !strings.Contains(msg, "not re-sent") {
		t.Fatalf("a 500 gave %q, want an error with the status, saying it is not re-sent", msg)
	}
	sched := waitEvent(t, ledger, "reconnect_scheduled", 1)
	if sched[0]["failures"] != 1.0 {
		t.Errorf("reconnect_scheduled after the 500 = %s, want failure 1", mustJSON(sched[0]))
	}
	c.in.Close()
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit %d after the client left, want 0", code)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the server ran %d calls, want 4: none sent twice", n)
	}
	ledgerCmd := exec.Command(shim, "ledger", ledger)
	out, err := ledgerCmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ENDED") || strings.Contains(string(out), "UNRECORDED") {
		t.Errorf("mcpshim ledger on the remote runs: %v\n%s\nwant them ENDED", err, out)
	}
	for _, r := range events(readLedger(t, ledger), "http_exchange") {
		if r.str("method") == "tools/call" && r["status"] == 200.0 && r.str("request_id") == "2" && r.str("body") != "json" {
			t.Errorf("http_exchange of the JSON answer says body %q, want json", r.str("body"))
		}
	}
}

// TestWhileDown: after a 500, a request sent during the 30 s backoff
// brings the attempt forward (issue 34 item 5): the server answers again,
// so the request is sent and answered, not failed with a stale "next
// attempt in 29.9s". A line that is not JSON-RPC is refused with a
// message, not sent.
func TestWhileDown(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--backoff", "30s", "--backoff-max", "30s"))
	c.send(initialize)
	c.answer(1)
	c.send(`this is not json`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
	c.answer(2)
	waitEvent(t, ledger, "reconnect_scheduled", 1) // the backoff step has begun
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{}}}`)
	if a := c.answer(3); a["result"] == nil {
		t.Fatalf("a request during the backoff, the server answering again, got %v, want its answer after an early attempt", a)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the server ran %d calls, want 2: each once", n)
	}
	rej := waitEvent(t, ledger, "message_rejected", 1)
	if rej[0].str("reason") != "not a JSON-RPC message" {
		t.Errorf("message_rejected = %s", mustJSON(rej[0]))
	}
	// The notice follows the record through the recorder's queue.
	for end := time.Now().Add(deadline); !strings.Contains(stderrOf(c.cmd), "not JSON-RPC"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("stderr does not mention the refused line:\n%s", stderrOf(c.cmd))
		}
	}
}

// TestRespelledID: the server answers id 7 as 7.0. Ids are matched as
// values, so the answer is the request's one answer, passed as the server
// wrote it, and no error follows it.
func TestRespelledID(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	c := startRaw(t, shimCommand(t, filepath.Join(t.TempDir(), "ledger.jsonl"), "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := <-c.lines; m["id"] != 7.0 || m["result"] == nil {
		t.Fatalf("got %v, want the answer to 7", m)
	}
	// Had 7.0 not matched 7, an error for 7 would come before this answer.
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	if m := <-c.lines; m["id"] != 8.0 || m["result"] == nil {
		t.Fatalf("got %v, want the answer to 8", m)
	}
}

// TestServerErrorWithoutID: a 400 whose JSON-RPC error has id null (the
// server could not tie it to the request) is not passed on: clients take an
// id-null error as fatal. The request gets its one answer from the shim,
// carrying the status and the server's message.
func TestServerErrorWithoutID(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","id":9,"method":"bogus"}`)
	first := <-c.lines
	if first["id"] != 9.0 {
		t.Fatalf("got %v first, want the answer to 9 (no id-null error before it)", first)
	}
	if msg := errorMessage(first); !strings.Contains(msg, "HTTP 400") || !strings.Contains(msg, "Method not found") {
		t.Fatalf("the request's answer says %q, want the status and the server's message", msg)
	}
}

// TestRequestTimeout: a call the server never answers gets an error after
// --request-timeout; it is not re-sent and counts no failure, and the next
// request goes through.
func TestRequestTimeout(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "1s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "timed out") || !strings.Contains(msg, "not re-sent") {
		t.Fatalf("the hung call got %q, want a timeout, not re-sent", msg)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if a := c.answer(3); a["result"] == nil {
		t.Fatalf("tools/list after the timeout = %v", a)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server got the hung call %d times, want 1", n)
	}
	if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled after a timeout, want none", n)
	}
}
