package verdict_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// These cases fold records through the ledger's Scanner, as the reader
// does; judge_test.go's through Decode.

var t0 = ledgertest.T0

// rec is one record of a scripted run (ledgertest.Ev), short enough to write
// unkeyed.
type rec struct {
	dt     time.Duration
	event  string
	fields []ledger.Field
	origin string
}

// scan folds one run's records through the Scanner and judges it, with
// alive answering for its pid; it returns the records too.
func scan(t *testing.T, alive bool, evs ...rec) (verdict.Verdict, *verdict.Fold, []ledger.Entry) {
	t.Helper()
	var out []ledgertest.Ev
	for _, e := range evs {
		out = append(out, ledgertest.Ev{DT: e.dt, Event: e.event, Fields: e.fields, Origin: e.origin})
	}
	var buf bytes.Buffer
	ledgertest.EncodeRun(&buf, "srv", "run_X", 77, out...)
	var fold verdict.Fold
	var entries []ledger.Entry
	sc := ledger.NewScanner(&buf)
	for sc.Scan() {
		fold.Add(sc.Entry())
		e, _ := sc.Decode()
		entries = append(entries, e)
	}
	up := alive && !fold.Ended()
	return verdict.Judge(&fold, t0.Add(time.Hour), up), &fold, entries
}

var (
	spawnReq  = rec{0, phases.SpawnRequested, []ledger.Field{ledger.F("generation", 1)}, ""}
	spawned   = rec{1 * ms, phases.Spawned, nil, ""}
	initRecv  = rec{2 * ms, phases.InitializeReceived, []ledger.Field{ledger.F("request_id", "1")}, ""}
	initResp  = rec{3 * ms, phases.InitializeResponded, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25")}, ""}
	exit0     = rec{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0)}, ""}
	exit1     = rec{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 1), ledger.F("stderr_tail", []string{"first", "fatal: boom", " "})}, ""}
	exitAsked = rec{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", -1), ledger.F("signal", "SIGTERM"), ledger.F("requested_by_shim", true)}, ""}
	exitKill  = rec{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", -1), ledger.F("signal", "SIGKILL")}, ""}
	noise     = rec{1500 * time.Microsecond, phases.StdoutNoise, []ledger.Field{ledger.F("preview", "Starting Acme MCP server")}, ""}
)

func TestOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		alive   bool
		evs     []rec
		outcome string
		detail  string
	}{
		{"spawn failed", false, []rec{spawnReq, {1 * ms, phases.SpawnFailed, []ledger.Field{ledger.F("error_class", "not_found"), ledger.F("error", "no such file")}, ""}},
			verdict.Exited, "cannot start: no such file"},
		{"exited before the handshake", false, []rec{spawnReq, spawned, initRecv, exit1}, verdict.Exited, "fatal: boom (exit 1 before answering the handshake)"},
		{"exited before the handshake, silent", false, []rec{spawnReq, spawned, exitKill}, verdict.Exited, "killed by SIGKILL, not sent by the shim, before any request reached it"},
		{"handshake refused", false, []rec{spawnReq, spawned, initRecv,
			{3 * ms, phases.InitializeFailed, []ledger.Field{ledger.F("code", -32602), ledger.F("message", "unsupported protocolVersion")}, ""}, exit0},
			verdict.ProtocolError, "handshake refused: -32602 unsupported protocolVersion"},
		{"discover refused, no fallback", false, []rec{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601), ledger.F("message", "method not found")}, ""}, exitAsked},
			verdict.ProtocolError, "handshake refused: -32601 method not found"},
		{"discover refused, initialize fallback answered: one good handshake", false, []rec{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601)}, ""}, initRecv, initResp, exit0}, verdict.Ended, "exited 0 by itself 6ms after the handshake, the client still connected"},
		{"discover refused, fallback never answered", false, []rec{spawnReq, spawned,
			{2 * ms, phases.DiscoverFailed, []ledger.Field{ledger.F("code", -32601)}, ""}, initRecv,
			{5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", 1000.0)}, ""}, exitAsked},
			verdict.Timeout, "no handshake answer in 1s (initialize_received_no_response); stderr silent"},
		{"noise before the handshake", false, []rec{spawnReq, spawned, noise, initRecv, initResp, exit0},
			verdict.ProtocolError, `stdout noise before the handshake: "Starting Acme MCP server"`},
		{"noise the client went past is a warning", false, []rec{spawnReq, spawned, noise, initRecv, initResp,
			{4 * ms, phases.InitializedReceived, nil, ""}, exit0},
			verdict.Ended, "exited 0 by itself 6ms after the handshake, the client still connected; warning: stdout noise before the handshake, which the client skipped: \"Starting Acme MCP server\""},
		{"the client gave up before the handshake: a failed start", false, []rec{spawnReq, spawned, initRecv,
			{1500 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}, {1600 * ms, phases.Exited, exitAsked.fields, ""}},
			verdict.Timeout, "no handshake answer: the client gave up after 1.5s (initialize_received_no_response); stderr silent"},
		{"the client left at once: no wait, no timeout", false, []rec{spawnReq, spawned, initRecv,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}, exitAsked},
			verdict.Ended, "the client left 5ms after the start, before the handshake; mcpshim stopped the server (killed by SIGTERM)"},
		{"the client left before the handshake of a live run", true, []rec{spawnReq, spawned,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}},
			verdict.Running, "the client left 5ms after the start, before the handshake; the server is being stopped"},
		{"the server died before the client left: its exit counts", false, []rec{spawnReq, spawned, initRecv, exit1,
			{10 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}}, verdict.Exited, "fatal: boom (exit 1 before answering the handshake)"},
		{"noise after the handshake is not a protocol error", false, []rec{spawnReq, spawned, initRecv, initResp,
			{4 * ms, phases.StdoutNoise, nil, ""}, exit0}, verdict.Ended, "exited 0 by itself 6ms after the handshake, the client still connected"},
		{"timeout", true, []rec{spawnReq, spawned,
			{5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.SpawnedNoInitialize), ledger.F("timeout_ms", 30000.0)}, ""}},
			verdict.Timeout, "no handshake answer in 30s (spawned_no_initialize)"},
		{"ready and running", true, []rec{spawnReq, spawned, initRecv, initResp}, verdict.Ready, "handshake done (2025-11-25)"},
		{"modern request counts as a handshake", true, []rec{spawnReq, spawned, {2 * ms, phases.ModernRequest, nil, ""}}, verdict.Ready, "handshake done"},
		{"replayed handshake after a restart", false, []rec{spawnReq, spawned, {2 * ms, phases.HandshakeReplayed, nil, ""}, exit0}, verdict.Ended, "exited 0 by itself 7ms after the handshake, the client still connected"},
		{"starting", true, []rec{spawnReq, spawned}, verdict.Running, "waiting for its handshake"},
		{"ended cleanly", false, []rec{spawnReq, spawned, initRecv, initResp, exit0}, verdict.Ended, "exited 0 by itself 6ms after the handshake, the client still connected"},
		{"stopped by the shim", false, []rec{spawnReq, spawned, initRecv, initResp,
			{5 * ms, phases.ClientDisconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}, ""}, exitAsked}, verdict.Ended, "the client left after 9ms (stdin_eof)"},
		{"crashed after the handshake", false, []rec{spawnReq, spawned, initRecv, initResp, exit1}, verdict.Crashed, "fatal: boom (exit 1, 6ms after the handshake)"},
		{"killed after the handshake", false, []rec{spawnReq, spawned, initRecv, initResp, exitKill}, verdict.Crashed, "killed by SIGKILL, not sent by the shim, 6ms after the handshake"},
		{"the handshake record was lost; the exit vouches", false, []rec{spawnReq, spawned,
			{9 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0), ledger.F("handshake", true)}, ""}}, verdict.Ended, "exited 0 by itself after the handshake, the client still connected"},
		{"shim killed: no exit and the pid is gone", false, []rec{spawnReq, spawned, initRecv, initResp}, verdict.Unrecorded,
			"no end recorded and pid 77 is gone: the shim was killed"},
		{"shim killed before the handshake", false, []rec{spawnReq, spawned}, verdict.Unrecorded, "no end recorded and pid 77 is gone: the shim was killed"},
		{"zero tools", false, []rec{spawnReq, spawned, initRecv, initResp,
			{4 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 0)}, ""}, exit0}, verdict.Ended, "exited 0 by itself 6ms after the handshake, the client still connected; zero tools listed"},
		{"a forged exit is ignored", true, []rec{spawnReq, spawned, initRecv, initResp, {4 * ms, phases.Exited, []ledger.Field{ledger.F("exit_code", 0)}, phases.OriginServer}},
			verdict.Ready, "handshake done (2025-11-25)"},
		{"order of arrival does not matter", false, []rec{exit1, initResp, spawned, spawnReq, initRecv}, verdict.Crashed, "fatal: boom (exit 1, 6ms after the handshake)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _, _ := scan(t, tc.alive, tc.evs...)
			if v.Outcome != tc.outcome || v.Reason != tc.detail {
				t.Errorf("got %s %q, want %s %q", v.Outcome, v.Reason, tc.outcome, tc.detail)
			}
		})
	}
}

func TestAnswers(t *testing.T) {
	listed := rec{5 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 2)}, ""}
	tests := []struct {
		name     string
		evs      []rec
		alive    bool
		answers  string
		evidence string // events of the evidence, "-" for none
	}{
		{"healthy, witnessed", []rec{{0, phases.SpawnRequested, []ledger.Field{ledger.F("egress", "witnessed")}, ""}, spawned, initRecv, initResp,
			{4 * ms, phases.InitializedReceived, nil, ""}, listed, exit0},
			false, "yes yes yes no", "spawned initialize_responded tools_list_responded spawn_requested"},
		{"reached out, the server says", []rec{spawnReq, spawned, initRecv, initResp, listed,
			{6 * ms, phases.ExternalAttempt, []ledger.Field{ledger.F("host", "api.example.test"), ledger.F("port", 443), ledger.F("scheme", "https")}, phases.OriginServer}, exit0},
			false, "yes yes yes yes", "spawned initialize_responded tools_list_responded external_attempt"},
		{"denied by the witness", []rec{spawnReq, spawned, initRecv, initResp,
			{6 * ms, phases.ExternalDenied, []ledger.Field{ledger.F("host", "evil.test")}, "witness"}, exit0},
			false, "yes yes unknown no", "spawned initialize_responded - external_denied"},
		{"zero tools", []rec{spawnReq, spawned, initRecv, initResp, {5 * ms, phases.ToolsListResponded, []ledger.Field{ledger.F("complete", true), ledger.F("tool_count", 0)}, ""}, exit0},
			false, "yes yes no unknown", "spawned initialize_responded tools_list_responded spawn_requested"},
		{"tools/list failed", []rec{spawnReq, spawned, initRecv, initResp, {5 * ms, phases.ToolsListFailed, []ledger.Field{ledger.F("code", -32603), ledger.F("message", "boom")}, ""}, exit0},
			false, "yes yes no unknown", "spawned initialize_responded tools_list_failed spawn_requested"},
		{"exited early", []rec{spawnReq, spawned, initRecv, exit1}, false, "yes no no unknown", "spawned exited - spawn_requested"},
		{"spawn failed", []rec{spawnReq, {ms, phases.SpawnFailed, []ledger.Field{ledger.F("error", "not found")}, ""}}, false, "no no no unknown",
			"spawn_failed spawn_failed - spawn_requested"},
		{"timeout", []rec{spawnReq, spawned, {5 * ms, phases.HandshakeTimeout, []ledger.Field{ledger.F("last_event", phases.SpawnedNoInitialize)}, ""}}, true,
			"yes no no unknown", "spawned handshake_timeout - spawn_requested"},
		{"noise", []rec{spawnReq, spawned, noise, initRecv, initResp, exit0}, false, "yes no no unknown", "spawned stdout_noise - spawn_requested"},
		{"still starting", []rec{spawnReq, spawned}, true, "yes unknown unknown unknown", "spawned - - spawn_requested"},
		{"ledger starts mid-run", []rec{initResp}, true, "unknown yes unknown unknown", "- initialize_responded - -"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _, entries := scan(t, tc.alive, tc.evs...)
			var answers, evidence []string
			for _, a := range v.Answers {
				answers = append(answers, a.Answer)
				if e := a.Evidence.Find(entries); e == nil {
					evidence = append(evidence, "-")
				} else {
					evidence = append(evidence, e.Event)
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

func TestFormatMS(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{{0.25, "250µs"}, {3.2, "3.2ms"}, {1500, "1.5s"}, {123456, "2m3s"}} {
		if got := verdict.FormatMS(tc.ms); got != tc.want {
			t.Errorf("verdict.FormatMS(%v): got %q, want %q", tc.ms, got, tc.want)
		}
	}
}
