package main

import (
	"strings"
	"testing"
)

// TestRunningCallHasEventLine: a call answered within one of the recorder's
// writes prints one event line (its answer's), so a call still running must
// still print its own, and the ledger keeps both records. The summarise
// tool waits for the client's sampling answer; the client gives it only
// once stderr shows the call.
func TestRunningCallHasEventLine(t *testing.T) {
	s := start(t, true, nil, "fixture", "sampling")
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarise","arguments":{"text":"x"}}}`)
	s.readUntil("sampling/createMessage", func(l string) bool { return strings.Contains(l, "sampling/createMessage") })
	waitFor(t, "the running call's event line on stderr", eventWait, func() bool {
		return strings.Contains(s.stderr.String(), "tool_call_received request_id=2 tool=summarise")
	})
	s.send(`{"jsonrpc":"2.0","id":"s-1","result":{"role":"assistant","content":{"type":"text","text":"short"},"model":"m"}}`)
	s.readUntil("the call's answer", func(l string) bool { return strings.HasPrefix(l, `{"jsonrpc":"2.0","id":2,`) })
	s.finish()
	if !strings.Contains(s.stderr.String(), "tool_call_responded request_id=2 tool=summarise") {
		t.Errorf("no tool_call_responded line for call 2 on stderr:\n%s", s.stderr)
	}
	es := s.entries()
	for _, want := range []string{"tool_call_received", "tool_call_responded"} {
		if e := find(es, want); e == nil || e.Str("request_id") != "2" {
			t.Errorf("ledger has no %s for call 2; events %v", want, events(es))
		}
	}
}
