package tap

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// feed runs lines through a fresh tracker; lines starting with "> " come from
// the client, "< " from the server.
func feed(t *testing.T, tr *Tracker, script ...string) []ledger.Record {
	t.Helper()
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	tr.Begin("run_1", 42, now, phases.Spawned)
	var out []ledger.Record
	for i, s := range script {
		dir := phases.FromClient
		if strings.HasPrefix(s, "< ") {
			dir = phases.FromServer
		}
		data := []byte(s[2:])
		now = now.Add(time.Millisecond)
		l := Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: now}
		_ = i
		out = append(out, tr.Observe(dir, &l)...)
	}
	return out
}

func eventNames(rs []ledger.Record) string {
	var names []string
	for _, r := range rs {
		names = append(names, r.Event)
	}
	return strings.Join(names, " ")
}

func fieldOf(r ledger.Record, key string) any {
	for _, f := range r.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

const (
	trInitReq  = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}}`
	trInitResp = `< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"2"}}}`
	trInited   = `> {"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func TestTrackerEvents(t *testing.T) {
	cases := []struct {
		name   string
		script []string
		want   string
		done   bool
	}{
		{"legacy handshake", []string{trInitReq, trInitResp, trInited},
			"initialize_received initialize_responded initialized_received", true},
		{"pipelining client", []string{trInitReq, trInited, trInitResp},
			"initialize_received initialized_received initialize_responded", true},
		{"refused", []string{trInitReq, `< {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported protocolVersion"}}`},
			"initialize_received initialize_failed", false},
		{"dual-era fallback", []string{
			`> {"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}`,
			trInitReq, trInitResp, trInited},
			"discover_received discover_failed initialize_received initialize_responded initialized_received", true},
		{"modern discover", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"1"}}}}`},
			"discover_received discover_responded", true},
		{"modern without handshake", []string{
			`> {"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":"a","result":{"tools":[]}}`},
			"modern_request tools_list_received tools_list_responded", true},
		{"ids per direction and by token", []string{trInitReq, trInitResp, trInited,
			`> {"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"x","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`< {"jsonrpc":"2.0","id":"1","result":{"isError":true,"content":[]}}`},
			"initialize_received initialize_responded initialized_received tool_call_received unknown_response tool_call_responded", true},
		{"server request", []string{trInitReq, trInitResp, trInited,
			`< {"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{}}`,
			`> {"jsonrpc":"2.0","id":"s-1","result":{}}`},
			"initialize_received initialize_responded initialized_received request_received request_responded", true},
		{"cancel", []string{trInitReq, trInitResp, trInited,
			`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`},
			"initialize_received initialize_responded initialized_received tool_call_received request_cancelled", true},
		{"noise that starts like JSON", []string{`< [2026-07-23 16:48:43] INFO listening`, `< {"jsonrpc":"2.0","id":1,"result":{bad}}`},
			"stdout_noise stdout_noise", false},
		{"batch", []string{`> [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			`< [{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`},
			"request_received request_received request_responded request_responded", false},
		{"list changed", []string{`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}, "tools_list_changed", false},
	}
	for _, c := range cases {
		tr := &Tracker{}
		rs := feed(t, tr, c.script...)
		if got := eventNames(rs); got != c.want {
			t.Errorf("%s: got events %q, want %q", c.name, got, c.want)
		}
		if tr.HandshakeDone() != c.done {
			t.Errorf("%s: HandshakeDone = %v, want %v", c.name, tr.HandshakeDone(), c.done)
		}
	}
}

func TestTrackerToolCallOutcomes(t *testing.T) {
	for body, want := range map[string]string{
		`"result":{"content":[]}`:                             "success",
		`"result":{"isError":true,"content":[]}`:              "is_error",
		`"result":{"resultType":"input_required"}`:            "input_required",
		`"error":{"code":-32602,"message":"unknown tool: x"}`: "rpc_error",
	} {
		rs := feed(t, &Tracker{}, `> {"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}`,
			`< {"jsonrpc":"2.0","id":9,`+body+`}`)
		if got := fieldOf(rs[len(rs)-1], "outcome"); got != want {
			t.Errorf("%s: outcome %v, want %s", body, got, want)
		}
	}
}

func TestTrackerPaginatedToolsList(t *testing.T) {
	rs := feed(t, &Tracker{},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"1"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"1"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`)
	first, last := rs[1], rs[3]
	if fieldOf(first, "complete") != false || fieldOf(last, "complete") != true {
		t.Fatalf("complete flags %v %v, want false true", fieldOf(first, "complete"), fieldOf(last, "complete"))
	}
	if got := fieldOf(last, "tools"); strings.Join(got.([]string), ",") != "a,b" || fieldOf(last, "tool_count") != 2 {
		t.Errorf("tools over all pages = %v (count %v), want [a b] 2", got, fieldOf(last, "tool_count"))
	}
}

func TestTrackerZeroToolsWarns(t *testing.T) {
	rs := feed(t, &Tracker{}, `> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if fieldOf(rs[1], "tool_count") != 0 || fieldOf(rs[1], "warning") == nil {
		t.Errorf("zero tools: %+v, want tool_count 0 and a warning", rs[1].Fields)
	}
}

func TestTrackerHandshakeTimeout(t *testing.T) {
	for _, c := range []struct {
		script []string
		last   string
	}{
		{nil, phases.SpawnedNoInitialize},
		{[]string{trInitReq}, phases.InitializeReceivedNoResponse},
		{[]string{trInitReq, trInitResp}, phases.ResponseSentNoInitialized},
	} {
		tr := &Tracker{HandshakeTimeout: time.Second}
		feed(t, tr, c.script...)
		d, ok := tr.Deadline()
		if !ok {
			t.Fatalf("%v: no deadline", c.script)
		}
		if rs := tr.Expire(d.Add(-time.Millisecond)); rs != nil {
			t.Errorf("expired before the deadline: %v", rs)
		}
		rs := tr.Expire(d)
		if len(rs) != 1 || fieldOf(rs[0], "last_event") != c.last {
			t.Errorf("%d lines: got %v, want one handshake_timeout with last_event %s", len(c.script), rs, c.last)
		}
		if again := tr.Expire(d.Add(time.Hour)); again != nil {
			t.Errorf("handshake_timeout recorded twice")
		}
	}
	tr := &Tracker{HandshakeTimeout: time.Second}
	feed(t, tr, trInitReq, trInitResp, trInited)
	if _, ok := tr.Deadline(); ok {
		t.Errorf("deadline still pending after a complete handshake")
	}
}

func TestTrackerCaptureRedactsBodies(t *testing.T) {
	tr := &Tracker{CaptureFull: true}
	rs := feed(t, tr, `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"api_key":"sk-live-1234567890abcdef"}}}`)
	body, _ := fieldOf(rs[0], "body").(string)
	if body == "" || strings.Contains(body, "sk-live-1234567890abcdef") {
		t.Errorf("body %q: want present and redacted", body)
	}
	rs = feed(t, &Tracker{}, `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`)
	if fieldOf(rs[0], "body") != nil {
		t.Errorf("meta capture recorded a body")
	}
}
