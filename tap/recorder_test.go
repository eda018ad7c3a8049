package tap_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// TestRecorderNeverBlocks: with a tiny queue and a slow ledger the relay's
// hand-off returns at once, and what did not fit is counted.
func TestRecorderNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	r := tap.NewRecorder(l, &tap.Tracker{}, tap.RecorderOptions{Queue: 1, MaxBytes: 64})
	start := time.Now()
	for range 1000 {
		data := []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}`)
		r.Line(phases.FromServer, &tap.Observation{Data: data, Size: int64(len(data)), Msg: mcp.Peek(data), End: time.Now()})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 hand-offs took %v", d)
	}
	dropped := r.Dropped()
	r.Close()
	if dropped == 0 {
		t.Fatal("nothing dropped with a queue of one")
	}
	es := ledgertest.ReadEntries(t, path)
	var lost int64
	for _, e := range es {
		if e.Event == phases.RecordsLost {
			n, _ := e.Int("count")
			lost += n
		}
	}
	if lost != int64(dropped) {
		t.Errorf("records_lost counts %d, want %d dropped", lost, dropped)
	}
}

// TestRecorderKeepsTheLifecycle: a queue full of observations drops
// observations, never the lifecycle records handed over with them: each
// is written, in the order handed over, and the dropped ones are counted.
// Before, Emit dropped them like observations.
func TestRecorderKeepsTheLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	r := tap.NewRecorder(l, &tap.Tracker{}, tap.RecorderOptions{Queue: 1})
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}`)
	events := []string{phases.Spawned, phases.SignalReceived, phases.ClientDisconnected, phases.KillRequested, phases.Exited}
	for i, ev := range events {
		for range 100 {
			r.Line(phases.FromServer, &tap.Observation{Data: data, Size: int64(len(data)), Msg: mcp.Peek(data), End: time.Now()})
		}
		r.Emit(ledger.Record{Time: time.Now(), Run: "r", PID: 1, Phase: phases.Launch, Event: ev, Fields: []ledger.Field{ledger.F("i", i)}})
	}
	r.Close()
	var got []string
	for _, e := range ledgertest.ReadEntries(t, path) {
		if e.Phase == phases.Launch {
			got = append(got, e.Event)
		}
	}
	if strings.Join(got, " ") != strings.Join(events, " ") {
		t.Errorf("got lifecycle %q, want %q whatever the observations lost (%d)", got, events, r.Dropped())
	}
}

// TestRecorderFoldsNotificationFloods: progress and message notifications
// become one count record per direction and method; the rest stays one
// record per message.
func TestRecorderFoldsNotificationFloods(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	r := tap.NewRecorder(l, &tap.Tracker{}, tap.RecorderOptions{})
	r.Emit(ledger.Record{Time: time.Now(), Run: "r", PID: 1, Phase: phases.Launch, Event: phases.Spawned})
	line := func(dir phases.Dir, s string) {
		data := []byte(s)
		r.Line(dir, &tap.Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: time.Now()})
	}
	for range 300 {
		line(phases.FromServer, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`)
		line(phases.FromServer, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	}
	line(phases.FromClient, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	line(phases.FromServer, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	r.Emit(ledger.Record{Time: time.Now(), Run: "r", PID: 1, Phase: phases.Launch, Event: phases.Exited})
	r.Close()
	counts := map[string]int64{}
	var got []string
	for _, e := range ledgertest.ReadEntries(t, path) {
		got = append(got, e.Event)
		if e.Event == phases.NotificationsFolded {
			n, _ := e.Int("count")
			counts[fmt.Sprint(e.Fields["direction"], " ", e.Fields["method"])] += n
		}
	}
	want := map[string]int64{"server notifications/message": 300, "server notifications/progress": 300}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("folded counts %v, want %v", counts, want)
	}
	if n := strings.Count(strings.Join(got, " "), "request_"); n != 2 || len(got) > 8 {
		t.Errorf("got events %v, want spawned, the ping's two records, the folded counts and exited", got)
	}
}

// TestRecorderFoldedNeverQueued: a folded notification is counted as it
// passes, neither its line nor an item queued: a flood of them never fills
// the queue or its byte budget, so none is lost (a 1 GiB flood once held
// 17 MiB of lines in the queue, and lost counts when it was full).
func TestRecorderFoldedNeverQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	r := tap.NewRecorder(l, &tap.Tracker{}, tap.RecorderOptions{Queue: 1, MaxBytes: 64})
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"message":"` + strings.Repeat("x", 200) + `"}}`)
	for range 1000 {
		r.Line(phases.FromServer, &tap.Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: time.Now()})
	}
	dropped := r.Dropped()
	r.Close()
	var counted int64
	for _, e := range ledgertest.ReadEntries(t, path) {
		if e.Event == phases.NotificationsFolded {
			n, _ := e.Int("count")
			counted += n
		}
	}
	if dropped != 0 || counted != 1000 {
		t.Errorf("got %d dropped, %d counted; want 0 dropped, 1000 counted (lines of %d bytes, a queue of 1, a budget of 64)", dropped, counted, len(data))
	}
}
