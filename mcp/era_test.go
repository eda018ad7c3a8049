package mcp

import (
	"strings"
	"testing"
)

func TestEraRequestIsComplete(t *testing.T) {
	e, ok := ModernEra([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}`))
	if !ok {
		t.Fatal("ModernEra: not modern")
	}
	line, err := e.Request(OwnID(1, "tools/list"), "tools/list", CursorParams("", false))
	if err != nil {
		t.Fatal(err)
	}
	m := Peek(line)
	meta := Member(m.Params, "_meta")
	for key, want := range map[string]string{MetaProtocolVersion: `"2026-07-28"`, MetaClientCapabilities: `{"roots":{}}`, MetaClientInfo: `{"name":"c","version":"1"}`} {
		if got := string(Member(meta, key)); got != want {
			t.Errorf("_meta[%s] = %s, want %s", key, got, want)
		}
	}
	if string(Member(m.Params, "cursor")) != `""` || !IsOwnID(m.ID) || m.Method != "tools/list" {
		t.Errorf("request %s: want cursor \"\", an own id and tools/list", line)
	}
	// No capabilities seen: the required field is still there, empty.
	line, _ = Era{Version: ModernVersion, Modern: true}.Request(OwnID(2, "tools/list"), "tools/list", nil)
	if !strings.Contains(string(line), `"io.modelcontextprotocol/clientCapabilities":{}`) {
		t.Errorf("request %s: want empty clientCapabilities", line)
	}
	if line, _ = (Era{Version: LegacyVersion}).Request(OwnID(3, "tools/list"), "tools/list", nil); strings.Contains(string(line), "_meta") {
		t.Errorf("legacy request %s carries _meta", line)
	}
	if _, ok := ModernEra([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`)); ok {
		t.Error("ModernEra took 2025-11-25 for modern")
	}
}

func TestPager(t *testing.T) {
	var p Pager
	steps := []struct {
		result, cursor string
		more           bool
	}{
		{`{"tools":[{"name":"a"}],"nextCursor":""}`, "", true},
		{`{"tools":[{"name":"b"}],"nextCursor":"2"}`, "2", true},
		{`{"tools":[{"name":"c"}],"nextCursor":null}`, "", false},
	}
	for i, s := range steps {
		cursor, more, err := p.Add([]byte(s.result))
		if err != nil || cursor != s.cursor || more != s.more {
			t.Fatalf("page %d: got %q %v %v, want %q %v", i, cursor, more, err, s.cursor, s.more)
		}
	}
	if len(p.Tools) != 3 {
		t.Errorf("%d tools, want 3", len(p.Tools))
	}
	var loop Pager
	loop.Add([]byte(`{"tools":[],"nextCursor":"x"}`))
	if _, _, err := loop.Add([]byte(`{"tools":[],"nextCursor":"x"}`)); err == nil {
		t.Error("a repeated cursor was followed")
	}
}

func TestOutcome(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`:                             OutcomeSuccess,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`:              OutcomeIsError,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"isError":true}]}}`:             OutcomeSuccess,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`:               OutcomeRPCError,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`:            OutcomeInputRequired,
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working"}}}`: OutcomeTaskCreated,
	} {
		m := Peek([]byte(line))
		if got := Outcome(&m); got != want {
			t.Errorf("Outcome(%s) = %s, want %s", line, got, want)
		}
	}
}
