package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// The teller says a run's verdict once, at its end record, and follows the
// next run after it.
func TestTeller(t *testing.T) {
	tl := &verdict.Teller{Name: "srv"}
	at := time.Now()
	rec := func(run, event string, fields ...ledger.Field) string {
		at = at.Add(time.Millisecond)
		return tl.Record(&ledger.Record{Time: at, Run: run, Seq: uint64(at.UnixNano()), Event: event, Fields: fields})
	}
	var said []string
	for _, r := range []struct {
		run, event string
		fields     []ledger.Field
	}{
		{"run_1", phases.SpawnRequested, nil},
		{"run_1", phases.Spawned, nil},
		{"run_1", phases.InitializeReceived, nil},
		{"run_1", phases.Exited, []ledger.Field{ledger.F("exit_code", 1), ledger.F("stderr_tail", []string{"Error: boom", "Node.js v22.23.5"})}},
		{"run_1", phases.RestartsExhausted, []ledger.Field{ledger.F("attempts", 0)}},
		{"run_2", phases.SpawnRequested, nil},
		{"run_2", phases.SpawnFailed, []ledger.Field{ledger.F("error", "no such file"), ledger.F("hint", "use an absolute path")}},
	} {
		if line := rec(r.run, r.event, r.fields...); line != "" {
			said = append(said, line)
		}
	}
	want := []string{
		"mcpshim srv: EXITED: Error: boom (exit 1 before answering the handshake) — fix what it says and start it again: a retry fails the same way\n",
		"mcpshim srv: EXITED: cannot start: no such file — use an absolute path\n",
	}
	if strings.Join(said, "") != strings.Join(want, "") {
		t.Errorf("the teller said %q, want %q", said, want)
	}
}

// BenchmarkTellerToolCall is the teller's cost on the recorder's goroutine
// for the records of one tool call (received and responded).
func BenchmarkTellerToolCall(b *testing.B) {
	tl := &verdict.Teller{Name: "srv"}
	now := time.Now()
	tl.Record(&ledger.Record{Time: now, Run: "run_1", Seq: 1, Event: phases.SpawnRequested})
	recv := ledger.Record{Time: now, Run: "run_1", Seq: 2, Event: phases.ToolCallReceived,
		Fields: []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo"), ledger.F("args_bytes", 17)}}
	resp := ledger.Record{Time: now, Run: "run_1", Seq: 3, Event: phases.ToolCallResponded,
		Fields: []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo"), ledger.F("outcome", "success"), ledger.F("latency_ms", time.Millisecond)}}
	b.ReportAllocs()
	for b.Loop() {
		tl.Record(&recv)
		tl.Record(&resp)
	}
}
