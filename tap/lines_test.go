package tap

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestAnsweredCallOneEventLine: a call answered before the recorder's write
// prints one event line, its answer's; a call still running when the write
// comes prints its own; the ledger has every record either way (text and
// JSON event lines alike). It drives the recorder's handling as one poll
// does, without its goroutine, so that what shares a write is certain.
func TestAnsweredCallOneEventLine(t *testing.T) {
	for _, json := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "l.jsonl")
		var events bytes.Buffer
		l, _ := ledger.Open(ledger.Options{Path: path, Events: &events, JSON: json})
		tr := &Tracker{}
		r := &Recorder{ledger: l, tracker: tr}
		line := func(dir phases.Dir, s string) {
			data := []byte(s)
			r.handle(item{dir: dir, line: Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: time.Now()}})
		}
		r.handle(item{rec: &ledger.Record{Time: time.Now(), Run: "run_1", PID: 1, Phase: phases.Launch, Event: phases.Spawned}})
		l.Hold()
		line(phases.FromClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		line(phases.FromServer, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		line(phases.FromClient, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
		line(phases.FromClient, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		line(phases.FromServer, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
		line(phases.FromClient, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
		line(phases.FromServer, `{"jsonrpc":"2.0","id":4,"result":{}}`)
		l.Flush() // the poll's write: call 3 is still running
		l.Hold()
		line(phases.FromServer, `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
		l.Flush()
		l.Close()

		var got []string
		for _, s := range strings.Split(strings.TrimSpace(events.String()), "\n") {
			e := s
			if json {
				d, err := ledger.Decode([]byte(s))
				if err != nil {
					t.Fatalf("JSON event line %q: %v", s, err)
				}
				e = d.Event + " " + d.Str(phases.FieldRequestID)
			} else {
				f := strings.Fields(s)
				e = f[3]
				for _, kv := range f[4:] {
					if id, ok := strings.CutPrefix(kv, "request_id="); ok {
						e += " " + id
					}
				}
			}
			got = append(got, strings.TrimSpace(e))
		}
		want := "spawned|initialize_received 1|initialize_responded 1|tool_call_received 3|tool_call_responded 2|request_responded 4|tool_call_responded 3"
		if strings.Join(got, "|") != want {
			t.Errorf("json=%v: event lines %s, want %s", json, strings.Join(got, "|"), want)
		}
		var recorded []string
		for _, e := range ledgertest.ReadEntries(t, path) {
			recorded = append(recorded, e.Event)
		}
		wantRecs := "spawned initialize_received initialize_responded tool_call_received tool_call_received tool_call_responded request_received request_responded tool_call_responded"
		if strings.Join(recorded, " ") != wantRecs {
			t.Errorf("json=%v: ledger %v, want %s", json, recorded, wantRecs)
		}
	}
}
