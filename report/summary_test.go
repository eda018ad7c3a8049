package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
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

func TestOutcome(t *testing.T) {
	tests := []struct {
		name    string
		alive   bool
		evs     []ev
		outcome string
		detail  string
	}{
		{"spawn failed", false, []ev{spawnReq, {1 * ms, phases.SpawnFailed, []ledger.Field{ledger.F("error_class", "not_found"), ledger.F("error", "no such file")}, ""}},
			phases.OutcomeExited, "not_found: no such file"},
		{"exited before the handshake", false, []ev{spawnReq, spawned, initRecv, exit1}, phases.OutcomeExited, "fatal: boom"},
		{"exited before the handshake, silent", false, []ev{spawnReq, spawned, exitKill}, phases.OutcomeExited, "killed by SIGKILL"},
		{"handshake refused", false, []ev{spawnReq, spawned, initRecv,
			{3 * ms, phases.InitializeFailed, []ledger.Field{ledger.F("code", -32602), ledger.F("message", "unsupported protocolVersion")}, ""}, exit0},
			phases.OutcomeProtocolError, "handshake refused: -32602 unsupported protocolVersion"},
		{"discover refused, no fallback", false, []ev{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601), ledger.F("message", "method not found")}, ""}, exitAsked},
			phases.OutcomeProtocolError, "handshake refused: -32601 method not found"},
		{"discover refused, initialize fallback answered: one good handshake", false, []ev{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601)}, ""}, initRecv, initResp, exit0}, phases.OutcomeEnded, ""},
		{"discover refused, fallback never answered", false, []ev{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601)}, ""}, initRecv,
			{5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", 1000.0)}, ""}, exitAsked},
			phases.OutcomeTimeout, "no handshake answer in 1s (initialize_received_no_response)"},
		{"noise before the handshake", false, []ev{spawnReq, spawned, noise, initRecv, initResp, exit0},
			phases.OutcomeProtocolError, `stdout noise before the handshake: "Starting Acme MCP server"`},
		{"noise the client went past is a warning", false, []ev{spawnReq, spawned, noise, initRecv, initResp,
			{4 * ms, phases.InitializedReceived, nil, ""}, exit0},
			phases.OutcomeEnded, `stdout noise before the handshake, which the client skipped: "Starting Acme MCP server"`},
		{"the client left before the handshake: a failed start", false, []ev{spawnReq, spawned, initRecv,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}, exitAsked},
			phases.OutcomeTimeout, "no handshake answer; the client gave up after 5ms"},
		{"the client left before the handshake of a live run", true, []ev{spawnReq, spawned,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}},
			phases.OutcomeTimeout, "no handshake answer; the client gave up after 5ms"},
		{"the server died before the client left: its exit counts", false, []ev{spawnReq, spawned, initRecv, exit1,
			{10 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}}, phases.OutcomeExited, "fatal: boom"},
		{"noise after the handshake is not a protocol error", false, []ev{spawnReq, spawned, initRecv, initResp,
			{4 * ms, phases.StdoutNoise, nil, ""}, exit0}, phases.OutcomeEnded, ""},
		{"timeout", true, []ev{spawnReq, spawned,
			{5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.SpawnedNoInitialize), ledger.F("timeout_ms", 30000.0)}, ""}},
			phases.OutcomeTimeout, "no handshake answer in 30s (spawned_no_initialize)"},
		{"ready and running", true, []ev{spawnReq, spawned, initRecv, initResp}, phases.OutcomeReady, ""},
		{"modern request counts as a handshake", true, []ev{spawnReq, spawned, {2 * ms, phases.ModernRequest, nil, ""}}, phases.OutcomeReady, ""},
		{"replayed handshake after a restart", false, []ev{spawnReq, spawned, {2 * ms, phases.HandshakeReplayed, nil, ""}, exit0}, phases.OutcomeEnded, ""},
		{"starting", true, []ev{spawnReq, spawned}, phases.OutcomeRunning, ""},
		{"ended cleanly", false, []ev{spawnReq, spawned, initRecv, initResp, exit0}, phases.OutcomeEnded, ""},
		{"stopped by the shim", false, []ev{spawnReq, spawned, initRecv, initResp,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}, exitAsked}, phases.OutcomeEnded, "client left (stdin_eof)"},
		{"crashed after the handshake", false, []ev{spawnReq, spawned, initRecv, initResp, exit1}, phases.OutcomeCrashed, "exit 1: fatal: boom"},
		{"killed after the handshake", false, []ev{spawnReq, spawned, initRecv, initResp, exitKill}, phases.OutcomeCrashed, "killed by SIGKILL"},
		{"the handshake record was lost; the exit vouches", false, []ev{spawnReq, spawned,
			{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0), ledger.F("handshake", true)}, ""}}, phases.OutcomeEnded, ""},
		{"shim killed: no exit and the pid is gone", false, []ev{spawnReq, spawned, initRecv, initResp}, phases.OutcomeUnrecorded,
			"no exit record; pid gone (the shim was killed)"},
		{"shim killed before the handshake", false, []ev{spawnReq, spawned}, phases.OutcomeUnrecorded, "no exit record; pid gone (the shim was killed)"},
		{"zero tools", false, []ev{spawnReq, spawned, initRecv, initResp,
			{4 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 0)}, ""}, exit0}, phases.OutcomeEnded, "zero tools listed"},
		{"a forged exit is ignored", true, []ev{spawnReq, spawned, initRecv, initResp, {4 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0)}, phases.OriginServer}},
			phases.OutcomeReady, ""},
		{"order of arrival does not matter", false, []ev{exit1, initResp, spawned, spawnReq, initRecv}, phases.OutcomeCrashed, "exit 1: fatal: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fold(t, tc.alive, tc.evs...)
			if r.Outcome != tc.outcome || r.Detail != tc.detail {
				t.Errorf("got %s %q, want %s %q", r.Outcome, r.Detail, tc.outcome, tc.detail)
			}
			if d := Diagnosis(&r); d == "" {
				t.Errorf("no diagnosis for %s", r.Outcome)
			}
		})
	}
}

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
	if want := (Calls{Received: 3, OK: 1, IsError: 1, Error: 1, InputRequired: 1}); r.Calls != want {
		t.Errorf("calls: got %+v, want %+v", r.Calls, want)
	}
	if r.LastEvent != phases.PendingFailed && r.LastEvent != phases.ToolCallReceived {
		t.Errorf("last event: got %s, want the last progress before the exit", r.LastEvent)
	}
	if r.RecordsLost != 4 || r.StderrLast() != "fatal: boom" || r.DurationMS != 9 || r.Generation != 1 || r.PID != 77 {
		t.Errorf("got lost %d, stderr %q, duration %v, generation %d, pid %d; want 4, fatal: boom, 9, 1, 77",
			r.RecordsLost, r.StderrLast(), r.DurationMS, r.Generation, r.PID)
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
		runs[0].Outcome != phases.OutcomeCrashed || runs[1].Outcome != phases.OutcomeReady {
		t.Errorf("got %+v, want run_A CRASHED -> run_B READY generation 2", runs)
	}
}

func TestExplain(t *testing.T) {
	listed := ev{5 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 2)}, ""}
	tests := []struct {
		name     string
		evs      []ev
		alive    bool
		answers  string
		evidence string // events of the evidence, "-" for none
	}{
		{"healthy, witnessed", []ev{{0, phases.SpawnRequested, []ledger.Field{ledger.F("egress", "witnessed")}, ""}, spawned, initRecv, initResp,
			{4 * ms, phases.InitializedReceived, nil, ""}, listed, exit0},
			false, "yes yes yes no", "spawned initialize_responded tools_list_responded spawn_requested"},
		{"reached out, the server says", []ev{spawnReq, spawned, initRecv, initResp, listed,
			{6 * ms, phases.ExternalAttempt, []ledger.Field{ledger.F("host", "api.example.test"), ledger.F("port", 443), ledger.F("scheme", "https")}, phases.OriginServer}, exit0},
			false, "yes yes yes yes", "spawned initialize_responded tools_list_responded external_attempt"},
		{"denied by the witness", []ev{spawnReq, spawned, initRecv, initResp,
			{6 * ms, phases.ExternalDenied, []ledger.Field{ledger.F("host", "evil.test")}, "witness"}, exit0},
			false, "yes yes unknown no", "spawned initialize_responded - external_denied"},
		{"zero tools", []ev{spawnReq, spawned, initRecv, initResp, {5 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 0)}, ""}, exit0},
			false, "yes yes no unknown", "spawned initialize_responded tools_list_responded spawn_requested"},
		{"tools/list failed", []ev{spawnReq, spawned, initRecv, initResp, {5 * ms, phases.ToolsListFailed, []ledger.Field{ledger.F("code", -32603), ledger.F("message", "boom")}, ""}, exit0},
			false, "yes yes no unknown", "spawned initialize_responded tools_list_failed spawn_requested"},
		{"exited early", []ev{spawnReq, spawned, initRecv, exit1}, false, "yes no no unknown", "spawned exited - spawn_requested"},
		{"spawn failed", []ev{spawnReq, {ms, phases.SpawnFailed, []ledger.Field{ledger.F("error", "not found")}, ""}}, false, "no no no unknown",
			"spawn_failed spawn_failed - spawn_requested"},
		{"timeout", []ev{spawnReq, spawned, {5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.SpawnedNoInitialize)}, ""}}, true,
			"yes no no unknown", "spawned handshake_timeout - spawn_requested"},
		{"noise", []ev{spawnReq, spawned, noise, initRecv, initResp, exit0}, false, "yes no no unknown", "spawned stdout_noise - spawn_requested"},
		{"still starting", []ev{spawnReq, spawned}, true, "yes unknown unknown unknown", "spawned - - spawn_requested"},
		{"ledger starts mid-run", []ev{initResp}, true, "unknown yes unknown unknown", "- initialize_responded - -"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			encodeRun(&buf, "srv", "run_X", 77, tc.evs...)
			s := NewSummary()
			var entries []ledger.Entry
			sc := ledger.NewScanner(&buf)
			for sc.Scan() {
				s.Add(sc.Entry())
				e, _ := sc.Decode()
				entries = append(entries, e)
			}
			SortEntries(entries)
			runs := s.Runs(t0, func(int) bool { return tc.alive })
			var answers, evidence []string
			for _, a := range Explain(&runs[0], entries) {
				answers = append(answers, a.Answer)
				if a.Evidence == nil {
					evidence = append(evidence, "-")
				} else {
					evidence = append(evidence, a.Evidence.Event)
				}
				if a.Reason == "" || a.Question == "" {
					t.Errorf("answer %s has no reason or question: %+v", a.Key, a)
				}
			}
			if strings.Join(answers, " ") != tc.answers || strings.Join(evidence, " ") != tc.evidence {
				t.Errorf("got %v with evidence %v, want %s with %s", answers, evidence, tc.answers, tc.evidence)
			}
		})
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

func TestFormatMS(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{{0.25, "250µs"}, {3.2, "3.2ms"}, {1500, "1.5s"}, {123456, "2m3s"}} {
		if got := FormatMS(tc.ms); got != tc.want {
			t.Errorf("FormatMS(%v): got %q, want %q", tc.ms, got, tc.want)
		}
	}
}
