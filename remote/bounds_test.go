package remote_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostile is a stateless JSON server whose tools misbehave as real servers
// and networks do; tools maps a tool name to what it writes.
func hostile(t *testing.T, tools map[string]func(w http.ResponseWriter, r *http.Request, id string)) *httpServer {
	return serve(t, "127.0.0.1:0", hostileHandler(tools))
}

// hostileHandler is hostile's handler, to mount behind another (the
// authorization fixture).
func hostileHandler(tools map[string]func(w http.ResponseWriter, r *http.Request, id string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if f := tools[req.Params.Name]; req.Method == "tools/call" && f != nil {
			f(w, r, string(req.ID))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"fine"}]}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	})
}

// endless writes p forever, until the client goes away.
func endless(w io.Writer, r *http.Request, p []byte) {
	for r.Context().Err() == nil {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// peakRSS is the shim's VmHWM in bytes, read before it exits. Only Linux
// has it; elsewhere the memory bound goes unmeasured (0) and the rest of the
// test still runs.
func peakRSS(t *testing.T, pid int) int64 {
	rss := peakRSSOf(pid)
	if rss == 0 {
		if runtime.GOOS == "linux" {
			t.Fatalf("no VmHWM in /proc/%d/status", pid)
		}
		t.Logf("peak memory not measured on %s", runtime.GOOS)
	}
	return rss
}

func call(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// TestMessageCap: an endless JSON body, a small gzip body that inflates
// past the cap, an endless SSE data line and an endless event each get an
// error for their request; the bridge goes on (the next call works, no
// outage), and its memory stays bounded.
func TestMessageCap(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 64<<10)
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`))
	for range 32 { // 32 MiB inflated, 32 KiB on the wire: past 1 MiB
		zw.Write(bytes.Repeat([]byte("0"), 1<<20))
	}
	zw.Write([]byte(`"}]}}`))
	zw.Close()
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"json": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
			endless(w, r, big)
		},
		"gzip": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		},
		"sse-line": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, `data: {"jsonrpc":"2.0","id":%s,"result":{"x":"`, id)
			endless(w, r, big)
		},
		"sse-event": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"x\":[\n", id)
			endless(w, r, []byte("data: 1,\n"))
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--max-message", "1048576"))
	c.send(initialize)
	c.answer(1)
	for i, tool := range []string{"json", "gzip", "sse-line", "sse-event"} {
		id := 10 + i
		c.send(call(id, tool))
		if msg := errorMessage(c.answer(float64(id))); !strings.Contains(msg, "--max-message") {
			t.Errorf("%s: the call got %q, want an error naming --max-message", tool, msg)
		}
		c.send(call(100+i, "fine"))
		if a := c.answer(float64(100 + i)); a["result"] == nil {
			t.Errorf("after %s: the next call got %v, want its result", tool, a)
		}
	}
	if rss := peakRSS(t, c.cmd.Process.Pid); rss > 200<<20 && len(buildFlags) == 0 { // -race multiplies memory
		t.Errorf("peak RSS %d MiB with --max-message 1MiB, want it bounded", rss>>20)
	}
	c.in.Close()
	c.exitCode()
	if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled: a message over the cap is no outage", n)
	}
}

// TestTimeoutFailsOnlyItsRequest: a JSON body trickling a byte a second
// times out (--request-timeout 2s); that request gets its error, while a
// healthy call streaming progress meanwhile gets its answer, and nothing is
// treated as an outage.
func TestTimeoutFailsOnlyItsRequest(t *testing.T) {
	release := make(chan struct{})
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"trickle": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
			for r.Context().Err() == nil {
				w.Write([]byte("a"))
				w.(http.Flusher).Flush()
				time.Sleep(time.Second)
			}
			close(release)
		},
		"progress": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			for i := 0; ; i++ {
				select {
				case <-release:
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", id)
					return
				case <-time.After(200 * time.Millisecond):
				}
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":%d}}\n\n", i)
				fl.Flush()
			}
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "2s"))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "progress"))
	c.send(call(3, "trickle"))
	// Either may come first: the trickle's cut releases the healthy call.
	got := c.answers(2, 3)
	if msg := errorMessage(got[3]); !strings.Contains(msg, "request timeout") {
		t.Errorf("the trickling call got %q, want the request timeout", msg)
	}
	if a := got[2]; a["result"] == nil {
		t.Errorf("the healthy call got %v, want its result", a)
	}
	c.in.Close()
	c.exitCode()
	if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled: a timeout is no outage", n)
	}
}

// TestSSELineEndings: an event stream with CR-only line endings (valid per
// the WHATWG grammar) is read like one with LF or CRLF.
func TestSSELineEndings(t *testing.T) {
	for name, eol := range map[string]string{"CR": "\r", "LF": "\n", "CRLF": "\r\n"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
				"sse": func(w http.ResponseWriter, r *http.Request, id string) {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, ": hello"+eol+"id: 1"+eol+"data: {\"jsonrpc\":\"2.0\",\"id\":"+id+","+eol+"data: \"result\":{}}"+eol+eol)
					w.(http.Flusher).Flush()
					<-r.Context().Done() // the stream stays open: the answer must come from the parse
				},
			})
			c := startRaw(t, shimCommand(t, filepath.Join(t.TempDir(), "l.jsonl"), "--url", s.url()))
			c.send(initialize)
			c.answer(1)
			c.send(call(2, "sse"))
			if a := c.answer(2); a["result"] == nil {
				t.Errorf("got %v, want the result", a)
			}
		})
	}
}

// TestBigAnswerStreamed: answers past the bridge's 1 MiB hold: a 4 MiB
// event with its id last (as the TypeScript SDK writes), a pretty-printed
// 4 MiB JSON body, and a 4 MiB duplicate (dropped). Each reaches the client
// whole as one valid line, and the tracker sees each call answered.
func TestBigAnswerStreamed(t *testing.T) {
	text := strings.Repeat("x", 4<<20)
	dup := make(chan struct{})
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"id-last": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]},\"jsonrpc\":\"2.0\",\"id\":%s}\n\n", text, id)
		},
		"pretty": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %s,\n  \"result\": {\n    \"content\": [{\"type\": \"text\", \"text\": %q}]\n  }\n}\n", id, text)
			close(dup)
		},
		"dup": func(w http.ResponseWriter, r *http.Request, id string) {
			<-dup
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":%q}}\n\n", text) // id 3 again
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	for id, tool := range map[int]string{2: "id-last", 3: "pretty"} {
		c.send(call(id, tool))
		a := c.answer(float64(id))
		res, _ := a["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) != 1 || content[0].(map[string]any)["text"] != text {
			t.Fatalf("%s: the 4 MiB answer did not arrive whole and valid: %.200s", tool, mustJSON(a))
		}
	}
	c.send(call(4, "dup"))
	c.answer(4)
	c.in.Close()
	c.exitCode()
	for m := range c.lines {
		if m["id"] == 3.0 {
			t.Errorf("a second answer to id 3 reached the client")
		}
	}
	recs := readLedger(t, ledger)
	if n := len(events(recs, "tool_call_responded")); n != 3 {
		t.Errorf("%d tool_call_responded, want 3\n%s", n, eventList(recs))
	}
	if d := events(recs, "late_response_dropped"); len(d) != 1 || d[0].str("request_id") != "3" {
		t.Errorf("late_response_dropped = %v, want one for id 3", d)
	}
}

// TestStalledStreamReleasesWire: the GET stream starts a 2 MiB notification
// and stalls halfway. A call's answer gets through meanwhile, and after
// --request-timeout the stalled message is broken off, none of it written.
func TestStalledStreamReleasesWire(t *testing.T) {
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+strings.Repeat("a", 2<<20))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // stalls
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		w.Header().Set("Mcp-Session-Id", "stall-session")
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		result := `{"content":[{"type":"text","text":"fine"}]}`
		if req.Method == "initialize" {
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"stall","version":"1"}}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "2s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitRecord(t, ledger, "the GET stream open", func(r record) bool { return isGET(r) && r["status"] == 200.0 })
	c.send(call(2, "fine"))
	if a := c.answer(2); a["result"] == nil {
		t.Fatalf("the call while the GET stream stalled got %v", a)
	}
}
