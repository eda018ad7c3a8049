package remote_test

// Streams and timeouts (issue 34, items 12-15 and 18): hostile loopback
// servers against the built shim.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// byMethod is a stateless server that answers as hostile does, except for
// the methods (or tools, as "tools/call NAME") in handlers.
func byMethod(t *testing.T, handlers map[string]func(w http.ResponseWriter, r *http.Request, id string)) *httpServer {
	tools := map[string]func(http.ResponseWriter, *http.Request, string){}
	methods := map[string]func(http.ResponseWriter, *http.Request, string){}
	for k, h := range handlers {
		if name, ok := strings.CutPrefix(k, "tools/call "); ok {
			tools[name] = h
		} else {
			methods[k] = h
		}
	}
	inner := hostileHandler(tools)
	return serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if h := methods[req.Method]; h != nil && r.Method == http.MethodPost {
			h(w, r, string(req.ID))
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		inner.ServeHTTP(w, r)
	}))
}

// TestListenOutlivesTheTimeout: a subscriptions/listen stream is
// acknowledged, then stays silent while a slow call times out
// (--request-timeout 1s), then carries a notification. The notification
// reaches the client and the listen request gets no error: the stream the
// spec keeps open has no request deadline. Shown to fail before the fix: the
// deadline was re-armed after the acknowledgment, the listen got "no answer
// within the request timeout" and the notification never came.
func TestListenOutlivesTheTimeout(t *testing.T) {
	notify := make(chan struct{})
	s := byMethod(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"subscriptions/listen": func(w http.ResponseWriter, r *http.Request, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":{\"toolsListChanged\":true}}}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-notify:
			case <-r.Context().Done():
				return
			}
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		"tools/call slow": func(w http.ResponseWriter, r *http.Request, id string) {
			<-r.Context().Done()
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "1s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	c.method("notifications/subscriptions/acknowledged")
	// A call sent after the acknowledgment times out after it: the listen's
	// deadline, were there one, would have passed by then.
	c.send(call(3, "slow"))
	if msg := errorMessage(c.answer(3)); !strings.Contains(msg, "request timeout") {
		t.Fatalf("the slow call got %q, want the request timeout", msg)
	}
	close(notify)
	if m := c.method("notifications/tools/list_changed", 2); m["id"] == 2.0 {
		t.Fatalf("the listen request got %v before the notification; want no answer, the stream open\n%s", m, stderrOf(c.cmd))
	}
	c.in.Close()
	c.exitCode()
}

// method reads lines until a message with the method arrives, or one that
// answers one of ids (returned too: the caller says what it means).
func (c *rawClient) method(name string, ids ...float64) map[string]any {
	c.t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the shim's stdout closed before %s\nstderr:\n%s", name, stderrOf(c.cmd))
			}
			if m["method"] == name {
				return m
			}
			for _, id := range ids {
				if m["id"] == id {
					return m
				}
			}
		case <-timeout:
			c.t.Fatalf("no %s within %v\nstderr:\n%s", name, deadline, stderrOf(c.cmd))
		}
	}
}

// resumable is a stateless server whose tool "cut" opens an event stream
// with retry (the retry field's text) and one event with an id, then ends it
// before the answer ("cut-big": halfway through a 2 MiB answer); the GET
// with Last-Event-ID then does what resumed says.
func resumable(t *testing.T, retry string, resumed func(w http.ResponseWriter, r *http.Request)) *httpServer {
	working := func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: "+retry+"\nid: ev-"+id+"\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
	}
	inner := hostileHandler(map[string]func(w http.ResponseWriter, r *http.Request, id string){
		"cut": func(w http.ResponseWriter, r *http.Request, id string) { working(w, id) },
		"cut-big": func(w http.ResponseWriter, r *http.Request, id string) { // cut halfway through a 2 MiB answer
			working(w, id)
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 1<<20+1<<19))
		},
	})
	return serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed(w, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
}

// TestResumeKeepsTheDeadline: a call's stream is cut before its answer;
// the server asks for a retry of 2^31-1 ms (24.8 days), or its resumed
// stream stays silent. Either way the call gets the request timeout's error
// (--request-timeout 3s): the request's deadline runs across the resume,
// and the retry field is capped. Shown to fail before the fix: both calls
// were held past the test's minute (the resume waited on the call alone,
// and its stream re-armed nothing).
func TestResumeKeepsTheDeadline(t *testing.T) {
	silent := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	for name, s := range map[string]*httpServer{
		"retry 24.8 days": resumable(t, "2147483647", silent),
		"silent resume":   resumable(t, "10", silent),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "3s"))
			c.send(initialize)
			c.answer(1)
			c.send(call(2, "cut"))
			if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "request timeout") {
				t.Errorf("the resumed call got %q, want the request timeout's error", msg)
			}
			c.in.Close()
			c.exitCode()
		})
	}
}

// TestSlowInitializeBlocksNothing: the server holds initialize
// (--request-timeout 10m); the client cancels it and then leaves. The
// cancellation reaches the server while the initialize is pending, and the
// shim answers the initialize with its error and exits once its grace is
// over, not when the server answers. Shown to fail before the fix: the initialize was sent
// on the goroutine that reads stdin, which read nothing more until it was
// answered (the cancellation never reached the server within the minute).
func TestSlowInitializeBlocksNothing(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	s := byMethod(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"initialize": func(w http.ResponseWriter, r *http.Request, id string) {
			<-r.Context().Done()
		},
		"notifications/cancelled": func(w http.ResponseWriter, r *http.Request, id string) {
			w.WriteHeader(http.StatusAccepted)
			cancelled <- struct{}{}
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--request-timeout", "10m"))
	c.send(initialize)
	waitRecord(t, ledger, "the initialize sent", func(r record) bool {
		return r.str("event") == "initialize_received"
	})
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timed out"}}`)
	select {
	case <-cancelled:
	case <-time.After(deadline):
		t.Fatalf("notifications/cancelled did not reach the server while the initialize was pending\n%s", stderrOf(c.cmd))
	}
	c.in.Close()
	if a := c.answer(1); a["error"] == nil {
		t.Errorf("the pending initialize got %v, want the shim's error", a)
	}
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit %d after the client's EOF, want 0", code)
	}
}

// answers reads lines until each of ids is answered, in any order.
func (c *rawClient) answers(ids ...float64) map[float64]map[string]any {
	c.t.Helper()
	got := map[float64]map[string]any{}
	timeout := time.After(deadline)
	for len(got) < len(ids) {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the shim's stdout closed before the answers to %v (got %v)\nstderr:\n%s", ids, got, stderrOf(c.cmd))
			}
			for _, id := range ids {
				if m["id"] == id {
					got[id] = m
				}
			}
		case <-timeout:
			c.t.Fatalf("no answers to %v within %v (got %v)\nstderr:\n%s", ids, deadline, got, stderrOf(c.cmd))
		}
	}
	return got
}

// TestErrorBodiesBounded: eight calls at once are each answered 400 with a
// 100 MiB JSON body. Each gets the shim's error naming the status, the
// bridge goes on, and its memory stays bounded: an error body is read up to
// the 1 MiB an answer is judged whole within, not to --max-message. Shown to
// fail before the fix: each body was read whole (peak RSS 800 MiB and more).
func TestErrorBodiesBounded(t *testing.T) {
	const size = 100 << 20
	chunk := []byte(strings.Repeat("x", 64<<10))
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"huge-400": func(w http.ResponseWriter, r *http.Request, id string) {
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"`, id)
			tail := `"}}`
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(size))
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, head)
			for n := len(head) + len(tail); n < size; n += len(chunk) {
				p := chunk[:min(len(chunk), size-n)]
				if _, err := w.Write(p); err != nil {
					return
				}
			}
			io.WriteString(w, tail)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	pid := c.cmd.Process.Pid
	t.Cleanup(func() { // before the shim is killed: the figure of a failing run
		if rss := peakRSSOf(pid); rss > 0 {
			t.Logf("peak RSS %.1f MiB (build flags %v)", float64(rss)/(1<<20), buildFlags)
		}
	})
	c.send(initialize)
	c.answer(1)
	var ids []float64
	for id := 10; id < 18; id++ {
		c.send(call(id, "huge-400"))
		ids = append(ids, float64(id))
	}
	for id, a := range c.answers(ids...) {
		if msg := errorMessage(a); !strings.Contains(msg, "HTTP 400") {
			t.Errorf("call %v got %.300s, want the shim's error naming HTTP 400", id, mustJSON(a))
		}
	}
	c.send(call(20, "fine"))
	if a := c.answer(20); a["result"] == nil {
		t.Errorf("the next call got %v, want its result", a)
	}
	rss := peakRSS(t, pid)
	t.Logf("peak RSS %.1f MiB before exit", float64(rss)/(1<<20))
	if rss > 200<<20 && len(buildFlags) == 0 { // -race multiplies memory
		t.Errorf("peak RSS %d MiB for eight 100 MiB error bodies, want it bounded", rss>>20)
	}
	c.in.Close()
	c.exitCode()
}

// TestClientLineBounded: with --max-message 1 MiB, the client sends a
// tools/call of 2 MiB whose id comes last. It is not sent: the call gets
// the shim's error naming the flag, message_too_large records it (direction
// client) and the next call works. Shown to fail before the fix: the line
// was read whole and POSTed, whatever its size.
func TestClientLineBounded(t *testing.T) {
	var posted atomic.Int64
	s := hostile(t, map[string]func(http.ResponseWriter, *http.Request, string){
		"big": func(w http.ResponseWriter, r *http.Request, id string) {
			posted.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
		},
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--max-message", "1048576"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"big","arguments":{"blob":%q}},"id":7}`, strings.Repeat("b", 2<<20))
	if msg := errorMessage(c.answer(7)); !strings.Contains(msg, "--max-message") {
		t.Errorf("the 2 MiB call got %q, want the shim's error naming --max-message", msg)
	}
	c.send(call(8, "fine"))
	if a := c.answer(8); a["result"] == nil {
		t.Errorf("the next call got %v, want its result", a)
	}
	c.in.Close()
	c.exitCode()
	if n := posted.Load(); n != 0 {
		t.Errorf("the server got the 2 MiB call %d times, want never", n)
	}
	recs := readLedger(t, ledger)
	if big := events(recs, "message_too_large"); len(big) != 1 || big[0].str("direction") != "client" || big[0].str("request_id") != "7" {
		t.Errorf("message_too_large = %v, want one, direction client, request 7\n%s", big, eventList(recs))
	}
}

// TestProbeReadsEveryLineEnding: `mcpshim probe` of a server whose event
// streams end their lines with a lone CR (valid per the WHATWG grammar),
// through the built binary: READY (exit 0). Shown to fail before the fix:
// the probe's own parser split only on LF (PROTOCOL_ERROR "ended without its
// response"). The probe now reads with package sse, whose bound
// TestSSEReaderCap holds (an endless event through the race-built probe
// took longer than a minute at load ~100).
func TestProbeReadsEveryLineEnding(t *testing.T) {
	for name, c := range map[string]struct {
		exit int
		say  string
	}{
		"CR": {exit: 0, say: "READY"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				json.Unmarshal(body, &req)
				switch {
				case req.ID == nil:
					w.WriteHeader(http.StatusAccepted)
					return
				case req.Method == "server/discover":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
					return
				}
				result := `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
				if req.Method == "initialize" {
					result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"cr","version":"1"}}`
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, ": hi\revent: message\rdata: {\"jsonrpc\":\"2.0\",\"id\":%s,\rdata: \"result\":%s}\r\r", req.ID, result)
			}))
			dir := t.TempDir()
			config := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(config, []byte(`{"mcpServers":{"remote":{"type":"http","url":"`+s.url()+`"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(shim, "probe", "--config", config, "--fresh", "--timeout", "60s", "--retries", "0")
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+dir, "XDG_STATE_HOME="+dir, "NO_COLOR=1")
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != c.exit || !strings.Contains(string(out), c.say) {
				t.Errorf("probe exit %d, want %d and %q in:\n%s", code, c.exit, c.say, out)
			}
		})
	}
}

// TestCutMessageNeverReachesTheClient: a call's stream gives an event id,
// then starts its 2 MiB answer and is cut halfway; the GET with
// Last-Event-ID gives the whole answer. The client gets that answer, and
// every line it got is valid JSON: a message reaches it only whole. Shown to
// fail before the fix: the cut half (over the 1 MiB hold, so streamed as it
// came) reached the client as a line of invalid JSON before the answer.
func TestCutMessageNeverReachesTheClient(t *testing.T) {
	text := strings.Repeat("x", 2<<20)
	answer := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	s := resumable(t, "10", func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.Header.Get("Last-Event-ID"), "ev-")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: ev-"+id+"-2\ndata: "+answer(id)+"\n\n")
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "cut-big"))
	for timeout := time.After(deadline); ; {
		select {
		case m, ok := <-c.lines:
			if !ok {
				t.Fatalf("the shim's stdout closed before the answer\n%s", stderrOf(c.cmd))
			}
			if bad, ok := m["not_json"].(string); ok {
				t.Fatalf("the client got a line of %d bytes that is not JSON (%.80q…) before the answer", len(bad), bad)
			}
			if m["id"] != 2.0 {
				continue
			}
			res, _ := m["result"].(map[string]any)
			content, _ := res["content"].([]any)
			if len(content) != 1 || content[0].(map[string]any)["text"] != text {
				t.Fatalf("the call got %.300s, want the resumed 2 MiB answer", mustJSON(m))
			}
		case <-timeout:
			t.Fatalf("no answer to 2 within %v\n%s", deadline, stderrOf(c.cmd))
		}
		break
	}
	c.in.Close()
	c.exitCode()
}
