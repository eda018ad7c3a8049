package demo

import (
	"io"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
)

// readLedger reads the records of path written past offset (all of
// them when the file is shorter: it was rotated meanwhile): the entries in
// order, and the runs as the ledger reader judges them.
func readLedger(path string, offset int64) ([]ledger.Entry, []report.Run, error) {
	f, err := ledger.OpenRead(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() >= offset {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, nil, err
		}
	}
	var entries []ledger.Entry
	sum := report.NewSummary()
	sc := ledger.NewScanner(f)
	for sc.Scan() {
		e, err := sc.Decode()
		if err != nil {
			continue
		}
		entries = append(entries, e)
		sum.Add(sc.Entry())
	}
	// Every shim has exited by now: a run without an exit record is unrecorded, not alive.
	return entries, sum.Runs(time.Now(), nil), sc.Err()
}

// summarize fills the events and the runs; the scenario's outcome is its
// last run's.
func (r *Result) summarize(entries []ledger.Entry, runs []report.Run) {
	base := entries[0].Time
	runIndex := map[string]int{}
	for _, e := range entries {
		n, ok := runIndex[e.Run]
		if !ok && e.Run != "" {
			n = len(runIndex) + 1
			runIndex[e.Run] = n
		}
		r.Events = append(r.Events, Event{
			AtMS:   float64(e.Time.Sub(base).Microseconds()) / 1000,
			Run:    n,
			Phase:  string(e.Phase),
			Event:  e.Event,
			Fields: keyFields(e),
		})
	}
	for i := range runs {
		why := runs[i].Reason
		if runs[i].Advice != "" {
			why += " — " + runs[i].Advice
		}
		r.Runs = append(r.Runs, Run{Run: runs[i], Why: why})
	}
	if len(r.Runs) > 0 {
		last := r.Runs[len(r.Runs)-1]
		r.Outcome, r.Why = last.Outcome, last.Why
	}
}

// keyFieldsOf are the fields worth a reader's glance, per event; other events
// show all their fields but the bulky ones.
var keyFieldsOf = map[string][]string{
	phases.SpawnRequested:      {phases.FieldGeneration, "argv"},
	phases.Spawned:             {"pid"},
	phases.SpawnFailed:         {phases.FieldErrorClass, phases.FieldError},
	phases.Exited:              {phases.FieldExitCode, phases.FieldSignal, phases.FieldStderrTail, phases.FieldRequestedByShim, phases.FieldLastEvent},
	phases.InitializeReceived:  {phases.FieldProtocolVersion, "client_name"},
	phases.InitializeResponded: {"server_name", phases.FieldProtocolVersion, phases.FieldLatencyMS},
	phases.InitializeFailed:    {phases.FieldCode, phases.FieldMessage},
	phases.InitializedReceived: {},
	phases.DiscoverReceived:    {phases.FieldProtocolVersion},
	phases.DiscoverResponded:   {"server_name", "supported_versions", phases.FieldLatencyMS},
	phases.DiscoverFailed:      {phases.FieldCode, phases.FieldMessage},
	phases.ModernRequest:       {phases.FieldMethod, phases.FieldProtocolVersion},
	phases.HandshakeTimeout:    {phases.FieldLastEvent, "timeout_ms"},
	phases.ToolsListReceived:   {},
	phases.ToolsListResponded:  {phases.FieldToolCount, "tools", "warning", phases.FieldLatencyMS},
	phases.ToolCallReceived:    {phases.FieldRequestID, phases.FieldTool},
	phases.ToolCallResponded:   {phases.FieldRequestID, phases.FieldTool, phases.FieldOutcome, phases.FieldCode, phases.FieldMessage, phases.FieldLatencyMS},
	phases.StdoutNoise:         {phases.FieldPreview, "before_handshake"},
	phases.PendingFailed:       {phases.FieldRequestID, phases.FieldMethod, phases.FieldTool},
	phases.ClientDisconnected:  {phases.FieldReason},
	phases.KillRequested:       {phases.FieldSignal, phases.FieldReason},
	phases.RestartScheduled:    {"attempt", "delay_ms", phases.FieldReason},
	phases.RestartsExhausted:   {"attempts", phases.FieldReason},
}

var bulky = map[string]bool{"env_names": true, "path": true, "cwd": true, "command": true, "tool_digests": true,
	"surface_sha256": true, "args_sha256": true, "sha256": true, "body": true, "previous_run": true, "stderr_tail": true}

func keyFields(e ledger.Entry) map[string]any {
	keys, ok := keyFieldsOf[e.Event]
	if !ok {
		for _, k := range e.FieldKeys() {
			if !bulky[k] {
				keys = append(keys, k)
			}
		}
	}
	out := map[string]any{}
	if e.Event == phases.Spawned {
		out["pid"] = e.PID // a common field: Decode keeps it out of Fields
	}
	for _, k := range keys {
		if v, ok := e.Fields[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
