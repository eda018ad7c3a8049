package report

import (
	"bytes"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
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

func phaseOf(event string) phases.Phase {
	switch event {
	case phases.SpawnRequested, phases.Spawned, phases.SpawnFailed, phases.Exited, phases.ExecutableReady:
		return phases.Launch
	case phases.ToolsListReceived, phases.ToolsListResponded, phases.ToolsListFailed, phases.ToolsMissing:
		return phases.Discovery
	case phases.ToolCallReceived, phases.ToolCallResponded, phases.ExternalAttempt, phases.ExternalResult, phases.ExternalDenied:
		return phases.Execution
	case phases.StdoutNoise, phases.ClientNoise:
		return phases.Transport
	case phases.RestartScheduled, phases.RestartsExhausted, phases.HandshakeReplayed:
		return phases.Supervision
	case phases.PendingFailed, phases.KillRequested, phases.ClientDisconnected:
		return phases.Interruption
	case phases.RecordsLost:
		return phases.LedgerPhase
	}
	return phases.Handshake
}

// healthyRun is a run that handshakes, lists two tools, answers a call and exits 0.
func healthyRun(buf *bytes.Buffer, server, run string) {
	encodeRun(buf, server, run, 4242,
		ev{0, phases.SpawnRequested, []ledger.Field{ledger.F("command", "/usr/bin/fs-mcp"), ledger.F("argv", []string{"--root", "/"}), ledger.F("generation", 1)}, ""},
		ev{2 * time.Millisecond, phases.Spawned, []ledger.Field{ledger.F("pid", 4242), ledger.F("pgid", 4242)}, ""},
		ev{10 * time.Millisecond, phases.InitializeReceived, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25")}, ""},
		ev{13 * time.Millisecond, phases.InitializeResponded, []ledger.Field{ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"), ledger.F("latency_ms", 3*time.Millisecond)}, ""},
		ev{14 * time.Millisecond, phases.InitializedReceived, nil, ""},
		ev{20 * time.Millisecond, phases.ToolsListResponded, []ledger.Field{ledger.F("request_id", "2"), ledger.F("tool_count", 2), ledger.F("tools", []string{"echo", "add"}), ledger.F("complete", true)}, ""},
		ev{30 * time.Millisecond, phases.ToolCallReceived, []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo")}, ""},
		ev{35 * time.Millisecond, phases.ToolCallResponded, []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "echo"), ledger.F("outcome", "success"), ledger.F("latency_ms", 5*time.Millisecond)}, ""},
		ev{time.Second, phases.Exited, []ledger.Field{ledger.F("exit_code", 0), ledger.F("duration_ms", 1000.0), ledger.F("handshake", true)}, ""},
	)
}
