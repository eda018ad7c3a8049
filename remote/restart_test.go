package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pythonServer answers as the Python SDK's stateful Streamable HTTP
// transport does with JSON answers (mcp/server/streamable_http_manager.py):
// a session per initialize, and for a session it does not know, up to
// 1.25 a text/plain 400 "Bad Request: No valid session ID provided", from
// 1.26 a 404 with JSON-RPC -32600 "Session not found". It offers no GET
// stream (405), so every miss is met by a request.
func pythonServer(ran *counters, v126 bool) http.Handler { return pythonServerWith(ran, v126, "") }

// pythonServerWith is pythonServer listing one more tool, extra, when set.
func pythonServerWith(ran *counters, v126 bool, extra string) http.Handler {
	var mu sync.Mutex
	sessions := map[string]bool{}
	n := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string            `json:"name"`
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		sid := r.Header.Get("Mcp-Session-Id")
		known := sessions[sid]
		if req.Method == "initialize" && sid == "" {
			n++
			sid = fmt.Sprintf("py-session-%d", n)
			sessions[sid], known = true, true
		}
		mu.Unlock()
		if !known {
			if v126 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "Bad Request: No valid session ID provided")
			return
		}
		w.Header().Set("Mcp-Session-Id", sid)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}},"serverInfo":{"name":"python-like","version":"1.25.0"}}`
		case "tools/list":
			tools := `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`
			if extra != "" {
				tools += `,{"name":"` + extra + `","inputSchema":{"type":"object"}}`
			}
			result = `{"tools":[` + tools + `]}`
		case "logging/setLevel", "resources/subscribe":
			ran.add(req.Method + " in " + sid)
		case "tools/call":
			msg := req.Params.Arguments["message"]
			ran.add("echo:" + msg)
			b, _ := json.Marshal(msg)
			result = `{"content":[{"type":"text","text":` + string(b) + `}],"isError":false}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	})
}

// mcpgoHandler is mark3labs/mcp-go's Streamable HTTP server with an echo
// tool that counts its calls.
func mcpgoHandler(ran *counters, stateful bool) http.Handler {
	s := mcpgoserver.NewMCPServer("mcpgo-restart", "1.0.0")
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithString("message")), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		msg := req.GetString("message", "")
		ran.add("echo:" + msg)
		return mcpgo.NewToolResultText(msg), nil
	})
	var opts []mcpgoserver.StreamableHTTPOption
	if stateful {
		opts = append(opts, mcpgoserver.WithStateful(true))
	}
	return mcpgoserver.NewStreamableHTTPServer(s, opts...)
}

// TestRestartForgetsSession kills each kind of server and starts a new one
// on the same port, which knows none of the old sessions. The first call
// after the restart succeeds and every call ran once by the server's own
// count; the servers that forgot the session were re-initialized once, with
// the status and the rule that told the bridge so.
func TestRestartForgetsSession(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func(*counters) http.Handler
		// status and rule of the miss; 0 when the server takes the old
		// session id (mcp-go's default manager accepts any).
		status int
		rule   string
		// resent: the miss is always met by the next call (no GET stream
		// to meet it first).
		resent bool
	}{
		{"python-1.25-text-400", func(c *counters) http.Handler { return pythonServer(c, false) }, 400, "http_400_session_text", true},
		{"python-1.26-404", func(c *counters) http.Handler { return pythonServer(c, true) }, 404, "http_404", true},
		{"mcpgo-stateful", func(c *counters) http.Handler { return mcpgoHandler(c, true) }, 404, "http_404", false},
		{"mcpgo-default", func(c *counters) http.Handler { return mcpgoHandler(c, false) }, 0, "", false},
		{"gosdk", func(c *counters) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(c, nil) }, nil)
		}, 404, "http_404", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran counters
			s1 := serve(t, "127.0.0.1:0", tc.handler(&ran))
			// A call sent on a kept-alive connection just as the server closes
			// it meets a reset, not the miss, and may have run: it is never
			// re-sent (the README's first limit). One connection per request
			// keeps this test about the miss.
			s1.srv.SetKeepAlivesEnabled(false)
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			cmd := shimCommand(t, ledger, "--url", s1.url())
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			cs := connect(t, ctx, &mcp.CommandTransport{Command: cmd}, "2025-06-18")
			defer cs.Close()
			if got, err := echo(ctx, cs, "before"); err != nil || got != "before" {
				t.Fatalf("echo before the restart = %q, %v\nstderr:\n%s", got, err, stderrOf(cmd))
			}
			s1.stop()
			serve(t, s1.addr, tc.handler(&ran)) // same port, no sessions
			if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
				t.Fatalf("the first call after the restart = %q, %v; want it to succeed\nstderr:\n%s\nledger:\n%s",
					got, err, stderrOf(cmd), eventList(readLedger(t, ledger)))
			}
			if got, err := echo(ctx, cs, "later"); err != nil || got != "later" {
				t.Fatalf("echo later = %q, %v", got, err)
			}
			cs.Close()
			waitEvent(t, ledger, "disconnected", 1)
			for _, c := range []string{"echo:before", "echo:after", "echo:later"} {
				if n := ran.get(c); n != 1 {
					t.Errorf("%s ran %d times on the server, want 1", c, n)
				}
			}
			recs := readLedger(t, ledger)
			reinit, resent := events(recs, "session_reinitialized"), events(recs, "resent_after_reinit")
			switch {
			case tc.status == 0 && len(reinit) != 0:
				t.Errorf("%d session_reinitialized for a server that takes the old session id, want 0", len(reinit))
			case tc.status != 0 && len(reinit) != 1:
				t.Errorf("%d session_reinitialized, want 1\n%s", len(reinit), eventList(recs))
			case tc.status != 0 && (reinit[0]["status"] != float64(tc.status) || reinit[0].str("rule") != tc.rule):
				t.Errorf("session_reinitialized = %s, want status %d and rule %s", mustJSON(reinit[0]), tc.status, tc.rule)
			}
			if tc.resent && (len(resent) != 1 || resent[0]["status"] != float64(tc.status) || resent[0].str("rule") != tc.rule) {
				t.Errorf("resent_after_reinit = %v, want one with status %d and rule %s", resent, tc.status, tc.rule)
			}
			if n := len(events(recs, "reconnect_scheduled")); n != 0 {
				t.Errorf("%d reconnect_scheduled after a forgotten session, want none", n)
			}
			if strings.Contains(stderrOf(cmd), "giving up") {
				t.Errorf("the bridge gave up:\n%s", stderrOf(cmd))
			}
		})
	}
}

// TestRestoreAfterReinit: after the server forgot the session, the new
// session gets the client's log level and resource subscription back, and
// the client, whose server declared tools.listChanged, is told the tools
// changed (the restarted server lists one more).
func TestRestoreAfterReinit(t *testing.T) {
	var ran counters
	s1 := serve(t, "127.0.0.1:0", pythonServerWith(&ran, false, ""))
	s1.srv.SetKeepAlivesEnabled(false)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s1.url()))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	c.answer(2)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///a"}}`)
	c.answer(3)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	c.answer(4)
	s1.stop()
	serve(t, s1.addr, pythonServerWith(&ran, false, "added"))
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}}`)
	notified := false
	for timeout := time.After(deadline); ; {
		select {
		case m := <-c.lines:
			if m["method"] == "notifications/tools/list_changed" {
				notified = true
			}
			if m["id"] != 5.0 {
				continue
			}
			if m["result"] == nil {
				t.Fatalf("the call after the restart got %v", m)
			}
		case <-timeout:
			t.Fatal("no answer to the call after the restart")
		}
		break
	}
	if !notified {
		t.Errorf("no notifications/tools/list_changed before the answer: the restarted server lists one more tool")
	}
	// Each server numbers its sessions from 1: the client's session on the
	// first, the re-initialized one on the second.
	if n := ran.get("logging/setLevel in py-session-1"); n != 2 {
		t.Errorf("logging/setLevel reached session 1 of each server %d times in all, want 2 (the client's, then the restore)", n)
	}
	if n := ran.get("resources/subscribe in py-session-1"); n != 2 {
		t.Errorf("resources/subscribe reached session 1 of each server %d times in all, want 2", n)
	}
	c.in.Close()
	c.exitCode()
	r := waitEvent(t, ledger, "session_restored", 1)[0]
	if r["restored"] != 2.0 || r["tools_changed"] != true {
		t.Errorf("session_restored = %s, want 2 restored and tools_changed", mustJSON(r))
	}
}

// TestSecondMiss: a server that forgets every session at once (replicas
// behind a balancer that share none): the call meets the miss, the bridge
// re-initializes and re-sends it once, it meets the miss again and gets an
// error; no third send, and no outage.
func TestSecondMiss(t *testing.T) {
	var posts counters
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		posts.add(req.Method)
		if req.Method != "initialize" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", posts.get("initialize")))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"forgetful","version":"1"}}}`, req.ID)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	c.send(initialize)
	c.answer(1)
	c.send(call(2, "echo"))
	if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "forgot the session again") {
		t.Errorf("the call got %q, want an error saying the server forgot the session again", msg)
	}
	c.in.Close()
	c.exitCode()
	if n := posts.get("tools/call"); n != 2 {
		t.Errorf("the server got the call %d times, want 2 (sent, re-sent once)", n)
	}
	if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled: a second miss is no outage", n)
	}
}

// TestRestoreComparesAllPages: a server that lists its tools a page at a
// time (go-sdk, PageSize 1: echo, then wait) restarts and forgets the
// session. The bridge compares every page of the new list with every page
// the client saw: the same tools are no change (comparing the first page
// with the last said "changed" every time), and a tool changed on the
// second page is one (comparing the first pages alone missed it).
func TestRestoreComparesAllPages(t *testing.T) {
	for _, tc := range []struct {
		name, waitAfter string
		changed         bool
	}{
		{"same tools", "Blocks until released.", false},
		{"second page changed", "Blocks, now for longer.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran counters
			var h atomic.Pointer[http.Handler]
			serveWith := func(waitDesc string) {
				var handler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
					s := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: 1})
					mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
						func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
							ran.add("echo:" + in.Message)
							return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
						})
					mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: waitDesc},
						func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
							return &mcp.CallToolResult{}, nil, nil
						})
					return s
				}, nil)
				h.Store(&handler)
			}
			serveWith("Blocks until released.")
			s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
			c.send(initialize)
			c.answer(1)
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			res, _ := c.answer(2)["result"].(map[string]any)
			cursor, _ := res["nextCursor"].(string)
			if cursor == "" {
				t.Fatalf("the first page has no nextCursor: %v", res)
			}
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":%q}}`, cursor)
			if res, _ := c.answer(3)["result"].(map[string]any); res["nextCursor"] != nil {
				t.Fatalf("the second page is not the last: %v", res)
			}
			serveWith(tc.waitAfter) // the restart: sessions forgotten
			c.send(call(4, "echo"))
			notified := false
			for timeout := time.After(deadline); ; {
				select {
				case m := <-c.lines:
					notified = notified || m["method"] == "notifications/tools/list_changed"
					if m["id"] != 4.0 {
						continue
					}
					if m["result"] == nil {
						t.Fatalf("the call after the restart got %v", m)
					}
				case <-timeout:
					t.Fatal("no answer to the call after the restart")
				}
				break
			}
			c.in.Close()
			c.exitCode()
			r := waitEvent(t, ledger, "session_restored", 1)[0]
			if notified != tc.changed || r["tools_changed"] != tc.changed {
				t.Errorf("list_changed sent %v, session_restored %s; want tools_changed %v\n%s", notified, mustJSON(r), tc.changed, eventList(readLedger(t, ledger)))
			}
		})
	}
}
