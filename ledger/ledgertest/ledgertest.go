// Package ledgertest writes and reads ledgers for tests: scripted runs as
// ledger lines, and files read back as entries.
package ledgertest

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// T0 is when the test runs start.
var T0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// Ev is one record of a test run, DT after T0.
type Ev struct {
	DT     time.Duration
	Event  string
	Fields []ledger.Field
	Origin string
}

// EncodeRun writes a run's records as ledger lines, seq from 1.
func EncodeRun(buf *bytes.Buffer, server, run string, pid int, evs ...Ev) {
	for i, e := range evs {
		r := ledger.Record{Time: T0.Add(e.DT), Shim: "shim_" + server, Run: run, Seq: uint64(i + 1), Server: server,
			PID: pid, Origin: e.Origin, Phase: PhaseOf(e.Event), Event: e.Event, Fields: e.Fields}
		r.Encode(buf)
	}
}

// PhaseOf is the phase an event belongs to.
func PhaseOf(event string) phases.Phase {
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

// HealthyRun is a run that handshakes, lists two tools, answers a call and exits 0.
func HealthyRun(buf *bytes.Buffer, server, run string) {
	EncodeRun(buf, server, run, 4242,
		Ev{0, phases.SpawnRequested, []ledger.Field{ledger.F("command", "/usr/bin/fs-mcp"), ledger.F("argv", []string{"--root", "/"}), ledger.F(phases.FieldGeneration, 1)}, ""},
		Ev{2 * time.Millisecond, phases.Spawned, []ledger.Field{ledger.F("pid", 4242), ledger.F("pgid", 4242)}, ""},
		Ev{10 * time.Millisecond, phases.InitializeReceived, []ledger.Field{ledger.F(phases.FieldRequestID, "1"), ledger.F(phases.FieldProtocolVersion, "2025-11-25")}, ""},
		Ev{13 * time.Millisecond, phases.InitializeResponded, []ledger.Field{ledger.F(phases.FieldRequestID, "1"), ledger.F(phases.FieldProtocolVersion, "2025-11-25"), ledger.F(phases.FieldLatencyMS, 3*time.Millisecond)}, ""},
		Ev{14 * time.Millisecond, phases.InitializedReceived, nil, ""},
		Ev{20 * time.Millisecond, phases.ToolsListResponded, []ledger.Field{ledger.F(phases.FieldRequestID, "2"), ledger.F(phases.FieldToolCount, 2), ledger.F("tools", []string{"echo", "add"}), ledger.F(phases.FieldComplete, true)}, ""},
		Ev{30 * time.Millisecond, phases.ToolCallReceived, []ledger.Field{ledger.F(phases.FieldRequestID, "3"), ledger.F(phases.FieldTool, "echo")}, ""},
		Ev{35 * time.Millisecond, phases.ToolCallResponded, []ledger.Field{ledger.F(phases.FieldRequestID, "3"), ledger.F(phases.FieldTool, "echo"), ledger.F(phases.FieldOutcome, "success"), ledger.F(phases.FieldLatencyMS, 5*time.Millisecond)}, ""},
		Ev{time.Second, phases.Exited, []ledger.Field{ledger.F(phases.FieldExitCode, 0), ledger.F(phases.FieldDurationMS, 1000.0), ledger.F(phases.FieldHandshake, true)}, ""},
	)
}

// ReadEntries decodes every record of the ledger file at path.
func ReadEntries(t testing.TB, path string) []ledger.Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Entry
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := ledger.Decode(line)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}
