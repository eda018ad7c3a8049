package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// modernMeta is the complete per-request _meta of a 2026-07-28 client.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"proto-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// readUntil reads client lines until one satisfies ok, and returns every
// line read. It fails the test when the stream ends first.
func (s *session) readUntil(what string, ok func(line string) bool) []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var lines []string
	for {
		line, err := s.client.ReadLine(ctx)
		if len(line) > 0 {
			lines = append(lines, string(line))
			if ok(string(line)) {
				return lines
			}
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, testfixtures.ErrServerRequest) {
			s.t.Fatalf("waiting for %s: %v; read %q", what, err, lines)
		}
	}
}

// rest closes the client's stdin and returns every line read until EOF.
func (s *session) rest() []string {
	s.t.Helper()
	s.stdin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var lines []string
	for {
		line, err := s.client.ReadLine(ctx)
		if len(line) > 0 {
			lines = append(lines, string(line))
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, testfixtures.ErrServerRequest) {
			if errors.Is(err, context.DeadlineExceeded) {
				s.t.Fatalf("no EOF from the shim: %v", err)
			}
			break
		}
	}
	_ = s.cmd.Wait()
	return lines
}

func (s *session) send(line string) {
	s.t.Helper()
	if err := s.client.Send(line); err != nil {
		s.t.Fatal(err)
	}
}

// answers counts the responses per id value in lines.
func answers(lines []string) map[mcp.ID]int {
	n := map[mcp.ID]int{}
	for _, l := range lines {
		if m := mcp.Peek([]byte(l)); m.IsResponse() {
			n[m.ID]++
		}
	}
	return n
}

func id(raw string) mcp.ID {
	v, ok := mcp.ParseID([]byte(raw))
	if !ok {
		panic("bad id " + raw)
	}
	return v
}

// waitEvent polls the ledger until it has event.
func (s *session) waitEvent(event string) *ledger.Entry {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(s.ledger); err == nil && strings.Contains(string(data), `"`+event+`"`) {
			if e := find(s.entries(), event); e != nil {
				return e
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("no %s in the ledger after 30s", event)
	return nil
}

// TestIDLastLongAnswerGetsOneAnswer: the TypeScript SDK writes the id after
// the result. A 3 MiB answer is still an answer: the call is settled, not
// answered again when the server exits.
func TestIDLastLongAnswerGetsOneAnswer(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "fixture", "huge-response", "--peer", "ts", "--size", fmt.Sprint(3<<20))
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"dump","arguments":{}}}`)
	lines := s.rest()
	if n := answers(lines)[id("5")]; n != 1 {
		t.Fatalf("id 5 got %d answers, want exactly 1 (the server's)", n)
	}
	es := s.entries()
	if e := find(es, "tool_call_responded"); e == nil || e.Str("request_id") != "5" || e.Str("outcome") != "success" {
		t.Errorf("tool_call_responded = %+v, want request 5 success", e)
	}
	for _, bad := range []string{"stdout_noise", "pending_failed", "unknown_response"} {
		if find(es, bad) != nil {
			t.Errorf("ledger has %s for an id-last answer; events %v", bad, events(es))
		}
	}
}

// TestRespelledIDsGetOneAnswer: servers that decode and re-encode ids answer
// `"\u00e9"` with `"é"`, `1e2` with `100`: the same value, one answer each.
func TestRespelledIDsGetOneAnswer(t *testing.T) {
	ids := []string{`"\u00e9"`, `"a\/b"`, `1e2`, `2.0`, `"\ud83d\ude00"`, `"😁"`, `3`, `"plain"`}
	for _, peer := range []string{"ts", "python"} {
		t.Run(peer, func(t *testing.T) {
			s := start(t, true, []string{"--restart", "never"}, "fixture", "healthy", "--peer", peer)
			s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":` + initParams + `}`)
			s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for _, raw := range ids {
				s.send(`{"jsonrpc":"2.0","id":` + raw + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
			}
			lines := s.rest()
			got := answers(lines)
			for _, raw := range ids {
				if got[id(raw)] != 1 {
					t.Errorf("id %s got %d answers, want 1; client read %q", raw, got[id(raw)], lines)
				}
			}
			for _, l := range lines {
				if strings.Contains(l, `"error"`) {
					t.Errorf("an error reached the client: %s", l)
				}
			}
			es := s.entries()
			if e := find(es, "unknown_response"); e != nil {
				t.Errorf("unknown_response for %s", e.Str("request_id"))
			}
			n := 0
			for _, e := range es {
				if e.Event == "tool_call_responded" && e.Str("outcome") == "success" {
					n++
				}
			}
			if n != len(ids) {
				t.Errorf("%d calls recorded answered, want %d", n, len(ids))
			}
		})
	}
}

// TestModernRestart: after a restart in the 2026-07-28 era the shim's own
// tools/list carries the required _meta (a go-sdk-like server rejects it
// otherwise with -32602), and the client hears of changed tools only on the
// subscription stream it opened for them.
func TestModernRestart(t *testing.T) {
	for _, listen := range []bool{false, true} {
		t.Run(fmt.Sprintf("listen=%v", listen), func(t *testing.T) {
			tools := filepath.Join(t.TempDir(), "tools")
			os.WriteFile(tools, []byte("echo,add"), 0o600)
			s := start(t, true, []string{"--backoff", "10ms"}, "fixture", "healthy", "--validate-meta", "--crash-on-call", "1", "--tools", "@"+tools)
			if listen {
				s.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
				s.readUntil("the acknowledgement", func(l string) bool { return strings.Contains(l, "notifications/subscriptions/acknowledged") })
			}
			s.call("1", "tools/list", `{`+modernMeta+`}`)
			os.WriteFile(tools, []byte("echo,search"), 0o600)
			if r := s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"x"},`+modernMeta+`}`); !strings.Contains(r, `"code":-31000`) {
				t.Fatalf("the call the server died on = %s, want the shim's error", r)
			}
			// Held while the server restarts, delivered after the replay.
			s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`)
			lines := s.readUntil("the answer to 3", func(l string) bool { m := mcp.Peek([]byte(l)); return m.IsResponse() && m.ID == id("3") })
			if !strings.Contains(lines[len(lines)-1], `"search"`) {
				t.Fatalf("call 3 = %s, want the restarted server's answer", lines[len(lines)-1])
			}
			var notes []string
			for _, l := range lines {
				if strings.Contains(l, "notifications/tools/list_changed") {
					notes = append(notes, l)
				}
				if m := mcp.Peek([]byte(l)); m.IsResponse() && m.ID == id(`"L"`) {
					t.Errorf("the open subscription was answered across the restart: %s", l)
				}
				if strings.Contains(l, "notifications/subscriptions/acknowledged") {
					// The client's stream never closed: the new server's
					// acknowledgement of the re-opened one is the shim's business.
					t.Errorf("a second acknowledgement reached the client across the restart: %s", l)
				}
			}
			want := 0
			if listen {
				want = 1
			}
			if len(notes) != want {
				t.Fatalf("client got %d notifications/tools/list_changed (%q), want %d", len(notes), notes, want)
			}
			if listen && !strings.Contains(notes[0], `"io.modelcontextprotocol/subscriptionId":"L"`) {
				t.Errorf("list_changed = %s, want it correlated with subscriptionId \"L\"", notes[0])
			}
			s.finish()
			es := s.entries()
			if e := find(es, "replay_failed"); e != nil {
				t.Errorf("replay_failed: %s", e.Str("error"))
			}
			ch := find(es, "tools_changed_after_restart")
			if ch == nil || fmt.Sprint(ch.Strs("added")) != "[search]" || ch.Bool("client_notified") != listen {
				t.Fatalf("tools_changed_after_restart = %+v, want added [search], client_notified %v", ch, listen)
			}
		})
	}
}

// TestLegacyListChangedOnlyWhenDeclared: a legacy server that never declared
// tools.listChanged would not send the notification; neither does the shim.
func TestLegacyListChangedOnlyWhenDeclared(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "tools")
	os.WriteFile(tools, []byte("echo,add"), 0o600)
	s := start(t, true, []string{"--backoff", "10ms"}, "fixture", "healthy", "--no-list-changed", "--crash-on-call", "1", "--tools", "@"+tools)
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", `{}`)
	os.WriteFile(tools, []byte("echo,search"), 0o600)
	s.call("3", "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"y"}}}`)
	lines := s.readUntil("the answer to 4", func(l string) bool { return strings.Contains(l, `"id":4`) })
	for _, l := range lines {
		if strings.Contains(l, "notifications/tools/list_changed") {
			t.Fatalf("the client got %s from a server that never declared tools.listChanged", l)
		}
	}
	s.finish()
	ch := find(s.entries(), "tools_changed_after_restart")
	if ch == nil || ch.Bool("client_notified") {
		t.Fatalf("tools_changed_after_restart = %+v, want it recorded with client_notified false", ch)
	}
}

// TestEmptyCursorIsNotTheEnd: 2026-07-28 "an empty string is a valid cursor
// and thus MUST NOT be treated as the end of results": the ledger's surface
// and the probe both take the page that follows.
func TestEmptyCursorIsNotTheEnd(t *testing.T) {
	s := start(t, true, nil, "fixture", "healthy", "--empty-cursor", "--tools", "a,b,c,d")
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := s.call("2", "tools/list", `{}`); !strings.Contains(r, `"nextCursor":""`) {
		t.Fatalf("first page = %s, want nextCursor \"\"", r)
	}
	s.call("3", "tools/list", `{"cursor":""}`)
	s.finish()
	var pages []*ledger.Entry
	es := s.entries()
	for i := range es {
		if es[i].Event == "tools_list_responded" {
			pages = append(pages, &es[i])
		}
	}
	if len(pages) != 2 || pages[0].Bool("complete") || !pages[1].Bool("complete") {
		t.Fatalf("tools_list_responded = %+v, want the first page incomplete and the second complete", pages)
	}
	if n, _ := pages[1].Int("tool_count"); n != 4 {
		t.Errorf("tool_count = %d, want 4 over both pages", n)
	}

	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{"paged": map[string]any{"command": builtShim(t),
		"args": []string{"fixture", "healthy", "--empty-cursor", "--tools", "a,b,c,d"}}})
	_, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg, "--retries", "0")
	if r := probeResult(t, rep, "paged"); r.Outcome != "READY" || len(r.Tools) != 4 {
		t.Errorf("probe = %s with %d tools (%s), want READY with 4", r.Outcome, len(r.Tools), r.Detail)
	}
}

// TestProbeDoesNotFallBackFromAModernServer: 2026-07-28 "a recognized modern
// JSON-RPC error (such as UnsupportedProtocolVersionError) identifies a
// modern server: the client retries with a supported version rather than
// falling back"; so does a DiscoverResult that lists no version the probe speaks.
func TestProbeDoesNotFallBackFromAModernServer(t *testing.T) {
	bin := builtShim(t)
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
		"refuses": map[string]any{"command": bin, "args": []string{"fixture", "healthy", "--refuse-discover", "--supported", "2030-01-01"}},
		"future":  map[string]any{"command": bin, "args": []string{"fixture", "healthy", "--supported", "2030-01-01"}},
	})
	// The probe sends initialize a quarter of its deadline after an
	// unanswered server/discover (a legacy server's fallback): at the default
	// 5s a race-built fixture starting at load 200 missed that 1.25s and the
	// probe fell back. A long deadline keeps the fallback out of the test;
	// the servers answer at once.
	_, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg, "--retries", "0", "--timeout", "240s")
	for _, name := range []string{"refuses", "future"} {
		r := probeResult(t, rep, name)
		if r.Outcome != "PROTOCOL_ERROR" || !strings.Contains(r.Detail, "2030-01-01") {
			t.Errorf("%s: probe = %s (%s), want PROTOCOL_ERROR naming the server's versions", name, r.Outcome, r.Detail)
		}
		for _, st := range r.Timeline {
			if st.Method == "initialize" {
				t.Errorf("%s: the probe fell back to initialize", name)
			}
		}
	}
}

// TestListenEndedByTheServer: a subscription the server ended with
// notifications/cancelled is owed nothing when the server dies.
func TestListenEndedByTheServer(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "fixture", "healthy", "--end-listen", "--crash-on-call", "1")
	s.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
	s.readUntil("the server's cancellation", func(l string) bool { return strings.Contains(l, "notifications/cancelled") })
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},` + modernMeta + `}}`)
	got := answers(s.rest())
	if got[id(`"L"`)] != 0 || got[id("9")] != 1 {
		t.Fatalf("answers: L %d, 9 %d; want 0 and 1", got[id(`"L"`)], got[id("9")])
	}
}

// TestServerRequestCancelledAtDeath: the client is told that a dead server's
// sampling request will never be waited for, so its dialog can close.
func TestServerRequestCancelledAtDeath(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "fixture", "sampling")
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"summarise","arguments":{"text":"x"}}}`)
	s.readUntil("sampling/createMessage", func(l string) bool { return strings.Contains(l, "sampling/createMessage") })
	pid := s.waitEvent("spawned").PID
	if pid <= 1 {
		t.Fatalf("spawned pid %d", pid) // never signal a group or init
	}
	if p, err := os.FindProcess(pid); err != nil || p.Kill() != nil {
		t.Fatalf("kill the server %d: %v", pid, err)
	}
	lines := s.readUntil("notifications/cancelled", func(l string) bool { return strings.Contains(l, "notifications/cancelled") })
	last := mcp.Peek([]byte(lines[len(lines)-1]))
	if rid, _ := mcp.ParseID(mcp.Member(last.Params, "requestId")); rid != id(`"s-1"`) {
		t.Fatalf("cancelled = %s, want requestId \"s-1\"", lines[len(lines)-1])
	}
	if got := answers(append(lines, s.rest()...)); got[id("4")] != 1 {
		t.Errorf("tools/call 4 got %d answers, want 1", got[id("4")])
	}
}

// TestCallRoundsAndTasks: an input_required round and its retry are one
// call; a task-augmented call ends with its tasks/result, linked back; a
// restart records the tasks it lost.
func TestCallRoundsAndTasks(t *testing.T) {
	s := start(t, true, []string{"--backoff", "10ms"}, "fixture", "healthy", "--tools", "echo,confirm,slow", "--crash-on-call", "5")
	s.call("1", "tools/call", `{"name":"slow","arguments":{},"task":{"ttl":60000},`+modernMeta+`}`)
	s.call("2", "tasks/result", `{"taskId":"task-1",`+modernMeta+`}`)
	if r := s.call("3", "tools/call", `{"name":"confirm","arguments":{},`+modernMeta+`}`); !strings.Contains(r, "input_required") {
		t.Fatalf("first round = %s, want input_required", r)
	}
	s.call("4", "tools/call", `{"name":"confirm","arguments":{},"inputResponses":{"ok":{"action":"accept"}},"requestState":"round-1",`+modernMeta+`}`)
	s.call("5", "tools/call", `{"name":"slow","arguments":{},"task":{},`+modernMeta+`}`)
	s.call("6", "tools/call", `{"name":"echo","arguments":{"text":"dies"},`+modernMeta+`}`)
	s.finish()
	es := s.entries()
	count := map[string]int{}
	for _, e := range es {
		count[e.Event]++
	}
	if count["tool_call_received"] != 4 || count["tool_call_continued"] != 1 || count["tool_call_input_required"] != 1 || count["tool_call_task_created"] != 2 {
		t.Errorf("received %d, continued %d, input_required %d, task_created %d; want 4 calls (1, 3, 5, 6), 1, 1, 2",
			count["tool_call_received"], count["tool_call_continued"], count["tool_call_input_required"], count["tool_call_task_created"])
	}
	var responded []string
	for _, e := range es {
		if e.Event == "tool_call_responded" {
			responded = append(responded, e.Str("request_id")+":"+e.Str("outcome")+":"+e.Str("task_id"))
		}
	}
	if fmt.Sprint(responded) != "[1:success:task-1 4:success:]" {
		t.Errorf("tool_call_responded = %v, want [1:success:task-1 4:success:] (the task's outcome under its call)", responded)
	}
	if ex := find(es, "exited"); ex == nil || fmt.Sprint(ex.Strs("tasks_lost")) != "[task-4]" {
		t.Errorf("exited = %+v, want tasks_lost [task-4] (the server's fourth call)", ex)
	}
}
