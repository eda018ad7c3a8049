package phases

import (
	"github.com/mcpshim-dev/mcpshim/ledger"

	"bytes"
	"time"
)

// t0 is when the test runs start.
var t0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// ev is one record of a test run, dt after t0.
type ev struct {
	dt     time.Duration
	event  string
	fields []ledger.Field
	origin string
}

// encodeRun writes a run's records as ledger lines, seq from 1.
func encodeRun(buf *bytes.Buffer, server, run string, pid int, evs ...ev) {
	for i, e := range evs {
		r := ledger.Record{Time: t0.Add(e.dt), Shim: "shim_" + server, Run: run, Seq: uint64(i + 1), Server: server,
			PID: pid, Origin: e.origin, Phase: phaseOf(e.event), Event: e.event, Fields: e.fields}
		r.Encode(buf)
	}
}

func phaseOf(event string) Phase {
	switch event {
	case SpawnRequested, Spawned, SpawnFailed, Exited, ExecutableReady:
		return Launch
	case ToolsListReceived, ToolsListResponded, ToolsListFailed, ToolsMissing:
		return Discovery
	case ToolCallReceived, ToolCallResponded, ExternalAttempt, ExternalResult, ExternalDenied:
		return Execution
	case StdoutNoise, ClientNoise:
		return Transport
	case RestartScheduled, RestartsExhausted, HandshakeReplayed:
		return Supervision
	case PendingFailed, KillRequested, ClientDisconnected:
		return Interruption
	case RecordsLost:
		return LedgerPhase
	}
	return Handshake
}

// healthyRun is a run that handshakes, lists two tools, answers a call and exits 0.
func healthyRun(buf *bytes.Buffer, server, run string) {
	encodeRun(buf, server, run, 4242,
		ev{0, SpawnRequested, []ledger.Field{ledger.F("command", "/usr/bin/fs-mcp"), ledger.F("argv", []string{"--root", "/"}), ledger.F("generation", 1)}, ""},
		ev{2 * time.Millisecond, Spawned, []ledger.Field{ledger.F("pid", 4242), ledger.F("pgid", 4242)}, ""},
		ev{10 * time.Millisecond, InitializeReceived, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25")}, ""},
		ev{13 * time.Millisecond, InitializeResponded, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"), ledger.F("latency_ms", 3*time.Millisecond)}, ""},
		ev{14 * time.Millisecond, InitializedReceived, nil, ""},
		ev{20 * time.Millisecond, ToolsListResponded, []ledger.Field{ledger.F("request_id", "2"), ledger.F("tool_count", 2), ledger.F("tools", []string{"echo", "add"}), ledger.F("complete", true)}, ""},
		ev{30 * time.Millisecond, ToolCallReceived, []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo")}, ""},
		ev{35 * time.Millisecond, ToolCallResponded, []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo"), ledger.F("outcome", "success"), ledger.F("latency_ms", 5*time.Millisecond)}, ""},
		ev{time.Second, Exited, []ledger.Field{ledger.F("exit_code", 0), ledger.F("duration_ms", 1000.0), ledger.F("handshake", true)}, ""},
	)
}
