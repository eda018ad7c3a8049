package demo

import (
	"io"
	"os"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
)

// readLedger reads the records of path written past offset (all of
// them when the file is shorter: it was rotated meanwhile): the entries in
// order, and the runs as the ledger reader judges them.
func readLedger(path string, offset int64) ([]ledger.Entry, []report.Run, error) {
	f, err := os.Open(path)
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
	phases.SpawnRequested:      {"generation", "argv"},
	phases.Spawned:             {"pid"},
	phases.SpawnFailed:         {"error_class", "error"},
	phases.Exited:              {"exit_code", "signal", "stderr_tail", "requested_by_shim", "last_event"},
	phases.InitializeReceived:  {"protocol_version", "client_name"},
	phases.InitializeResponded: {"server_name", "protocol_version", "latency_ms"},
	phases.InitializeFailed:    {"code", "message"},
	phases.InitializedReceived: {},
	phases.DiscoverReceived:    {"protocol_version"},
	phases.DiscoverResponded:   {"server_name", "supported_versions", "latency_ms"},
	phases.DiscoverFailed:      {"code", "message"},
	phases.ModernRequest:       {"method", "protocol_version"},
	phases.HandshakeTimeout:    {"last_event", "timeout_ms"},
	phases.ToolsListReceived:   {},
	phases.ToolsListResponded:  {"tool_count", "tools", "warning", "latency_ms"},
	phases.ToolCallReceived:    {"request_id", "tool"},
	phases.ToolCallResponded:   {"request_id", "tool", "outcome", "code", "message", "latency_ms"},
	phases.StdoutNoise:         {"preview", "before_handshake"},
	phases.PendingFailed:       {"request_id", "method", "tool"},
	phases.ClientDisconnected:  {"reason"},
	phases.KillRequested:       {"signal", "reason"},
	phases.RestartScheduled:    {"attempt", "delay_ms", "reason"},
	phases.RestartsExhausted:   {"attempts", "reason"},
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
