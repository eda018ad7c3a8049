package report

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

var t0 = ledgertest.T0

// ev is one record of a scripted run (ledgertest.Ev), short enough to write
// unkeyed.
type ev struct {
	dt     time.Duration
	event  string
	fields []ledger.Field
	origin string
}

func encodeRun(buf *bytes.Buffer, server, run string, pid int, evs ...ev) {
	var out []ledgertest.Ev
	for _, e := range evs {
		out = append(out, ledgertest.Ev{DT: e.dt, Event: e.event, Fields: e.fields, Origin: e.origin})
	}
	ledgertest.EncodeRun(buf, server, run, pid, out...)
}

// fold folds one run's records and returns it, with alive answering for its pid.
func fold(t *testing.T, alive bool, evs ...ev) Run {
	t.Helper()
	var buf bytes.Buffer
	encodeRun(&buf, "srv", "run_X", 77, evs...)
	s := NewSummary()
	sc := ledger.NewScanner(&buf)
	for sc.Scan() {
		s.Add(sc.Entry())
	}
	runs := s.Runs(t0.Add(time.Hour), func(int) bool { return alive })
	if len(runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(runs))
	}
	return runs[0]
}

var (
	ms        = time.Millisecond
	spawnReq  = ev{0, phases.SpawnRequested, []ledger.Field{ledger.F("generation", 1)}, ""}
	spawned   = ev{1 * ms, phases.Spawned, nil, ""}
	initRecv  = ev{2 * ms, phases.InitializeReceived, []ledger.Field{ledger.F("request_id", "1")}, ""}
	initResp  = ev{3 * ms, phases.InitializeResponded, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25")}, ""}
	exit0     = ev{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0)}, ""}
	exit1     = ev{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 1), ledger.F("stderr_tail", []string{"first", "fatal: boom", " "})}, ""}
	exitAsked = ev{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", -1), ledger.F("signal", "SIGTERM"), ledger.F("requested_by_shim", true)}, ""}
	exitKill  = ev{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", -1), ledger.F("signal", "SIGKILL")}, ""}
	noise     = ev{1500 * time.Microsecond, phases.StdoutNoise, []ledger.Field{ledger.F("preview", "Starting Acme MCP server")}, ""}
)

func TestRunAggregates(t *testing.T) {
	r := fold(t, false, spawnReq, spawned, initRecv, initResp,
		ev{4 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", false), ledger.F("page_tools", 2)}, ""},
		ev{5 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("page_tools", 1), ledger.F("tool_count", 3)}, ""},
		ev{6 * ms, phases.ToolCallReceived, []ledger.Field{ledger.F("tool", "a")}, ""},
		ev{7 * ms, phases.ToolCallResponded, []ledger.Field{ledger.F("tool", "a"), ledger.F("outcome", "success")}, ""},
		ev{6 * ms, phases.ToolCallReceived, []ledger.Field{ledger.F("tool", "b")}, ""},
		ev{7 * ms, phases.ToolCallResponded, []ledger.Field{ledger.F("tool", "b"), ledger.F("outcome", "is_error")}, ""},
		ev{7 * ms, phases.ToolCallResponded, []ledger.Field{ledger.F("tool", "b"), ledger.F("outcome", "input_required")}, ""},
		ev{8 * ms, phases.ToolCallReceived, []ledger.Field{ledger.F("tool", "c")}, ""},
		ev{8 * ms, phases.PendingFailed, []ledger.Field{ledger.F("tool", "c"), ledger.F("method", "tools/call")}, ""},
		ev{8 * ms, phases.PendingFailed, []ledger.Field{ledger.F("method", "ping")}, ""},
		ev{8 * ms, phases.RecordsLost, []ledger.Field{ledger.F("count", 4)}, ""},
		exit1,
		ev{10 * ms, phases.RestartScheduled, []ledger.Field{ledger.F("previous_run", "run_X")}, ""},
	)
	if r.Tools == nil || *r.Tools != 3 {
		t.Errorf("tools over pages: got %v, want 3 (the last page's total)", r.Tools)
	}
	if want := (verdict.Calls{Received: 3, OK: 1, IsError: 1, Error: 1, InputRequired: 1}); r.Calls != want {
		t.Errorf("calls: got %+v, want %+v", r.Calls, want)
	}
	if r.LastEvent != phases.PendingFailed && r.LastEvent != phases.ToolCallReceived {
		t.Errorf("last event: got %s, want the last progress before the exit", r.LastEvent)
	}
	if r.RecordsLost != 4 || r.Cause != "fatal: boom" || r.DurationMS != 9 || r.Generation != 1 || r.PID != 77 {
		t.Errorf("got lost %d, cause %q, duration %v, generation %d, pid %d; want 4, fatal: boom, 9, 1, 77",
			r.RecordsLost, r.Cause, r.DurationMS, r.Generation, r.PID)
	}
}

func TestRestartLinks(t *testing.T) {
	var buf bytes.Buffer
	encodeRun(&buf, "srv", "run_A", 1, spawnReq, spawned, initResp, exit1)
	encodeRun(&buf, "srv", "run_B", 2, ev{time.Second, phases.SpawnRequested, []ledger.Field{ledger.F("generation", 2), ledger.F("previous_run", "run_A")}, ""},
		ev{time.Second + ms, phases.Spawned, nil, ""}, ev{time.Second + 2*ms, phases.HandshakeReplayed, nil, ""})
	s := NewSummary()
	sc := ledger.NewScanner(&buf)
	for sc.Scan() {
		s.Add(sc.Entry())
	}
	runs := s.Runs(t0, func(int) bool { return true })
	if len(runs) != 2 || runs[0].NextRun != "run_B" || runs[1].PreviousRun != "run_A" || runs[1].Generation != 2 ||
		runs[0].Outcome != verdict.Crashed || runs[1].Outcome != verdict.Ready {
		t.Errorf("got %+v, want run_A CRASHED -> run_B READY generation 2", runs)
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.add(float64(i) / 10) // 0.1ms .. 100ms
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 50}, {0.95, 95}, {0.99, 99}, {1, 100}} {
		got := h.quantile(tc.q)
		if math.Abs(got-tc.want)/tc.want > 0.03 {
			t.Errorf("quantile(%v) of 0.1..100ms: got %v, want %v within 3%%", tc.q, got, tc.want)
		}
	}
	var one histogram
	one.add(7)
	if got := one.quantile(0.5); got != 7 {
		t.Errorf("quantile of one value 7: got %v, want 7 (clamped to the value seen)", got)
	}
	one.add(math.NaN())
	one.add(-1)
	one.add(1e12)
	if one.total != 2 || one.quantile(1) != 1e12 {
		t.Errorf("NaN and negatives: got total %d, max %v, want 2, 1e12", one.total, one.quantile(1))
	}
}
