package report

// The JSON views of mcpshim ledger.
//
// --json prints one JSON document per command (tail --json streams the ledger
// lines themselves). Field names are stable:
//
//	mcpshim ledger --json
//	  {"files": [PATH], "records": N, "skipped_lines": N, "records_lost": N, "runs": [RUN]}
//	RUN
//	  run, short (the prefix shown), server, shim, origin, pid, generation,
//	  previous_run, next_run, started, ended (RFC 3339), duration_ms,
//	  outcome (READY TIMEOUT EXITED PROTOCOL_ERROR RUNNING ENDED CRASHED
//	  UNRECORDED, and for a remote run UNREACHABLE AUTH_REQUIRED), failed (the
//	  `!` of the table), fixable, alive (no exit recorded and the pid answers
//	  kill -0), last_event (the last confirmed event), detail (the reason, the
//	  table's WHY), cause (the line that says why), advice, warning,
//	  remote, url, address,
//	  handshake (the event that completed it), handshake_at, initialized, protocol_version,
//	  server_name, tools (null: never listed), tools_list_failed,
//	  calls {received, ok, is_error, error, input_required}, noise,
//	  noise_preview, noise_before_handshake, client_noise, egress, external,
//	  spawn_failed, error_class, error, hint, timeout_last_event, timeout_ms,
//	  exited, exit_code (null: killed by a signal, or no exit), signal,
//	  requested_by_shim, stop_reason, stderr_tail, stderr_cause, restarts_exhausted,
//	  attempts, records_lost, forged, records, and when they apply
//	  server_version, tools_list_error, lock_missing, lock_mode, external_target,
//	  external_by_server, denied_target, executable_ready, timeout_waiting,
//	  gave_up, end_reason, auth_status, www_authenticate, http_failure,
//	  http_failure_method, http_status (verdict.Facts and verdict.Verdict)
//	mcpshim ledger show RUN --json
//	  {"run": RUN, "diagnosis": TEXT (the reason), "advice": TEXT, "events": [EVENT], "skipped_lines": N}
//	EVENT
//	  {"ts", "offset_ms" (since the run's first record), "seq", "phase", "event", "origin", "fields": {...}}
//	mcpshim ledger why --json
//	  {"runs": [{"run": RUN, "answers": [ANSWER]}], "skipped_lines": N}
//	ANSWER
//	  {"key" (launched initialized tools external), "question", "answer" (yes no unknown), "reason", "evidence": EVENT or null}
//	mcpshim ledger stats --json
//	  {"records": N, "skipped_lines": N, "servers": [{"server", "runs", "failed", "outcomes": {OUTCOME: N}, "restarts",
//	   "zero_tool_discoveries", CALLS, "tools": [{"tool", CALLS}]}]}
//	CALLS
//	  "calls" (finished), "ok", "is_error", "errors", "input_required", "error_rate", "is_error_rate",
//	  "latency_ms": {"p50", "p95", "p99"} or null
//	mcpshim ledger report --html FILE --json
//	  {"file": PATH, "runs": N}
//	mcpshim ledger prune --older-than AGE --json
//	  {"removed": [{"path", "bytes", "modified"}], "kept": N, "dry_run": BOOL}

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// RunJSON is a run as --json prints it, with the prefix of its id shown.
type RunJSON struct {
	Run
	Short string `json:"short"`
}

// EventJSON is one record as --json prints it.
type EventJSON struct {
	Time     time.Time      `json:"ts"`
	OffsetMS float64        `json:"offset_ms"`
	Seq      uint64         `json:"seq"`
	Phase    phases.Phase   `json:"phase"`
	Event    string         `json:"event"`
	Origin   string         `json:"origin,omitempty"`
	Fields   map[string]any `json:"fields"`
}

// ToEventJSON is e as --json prints it, its offset counted from start.
func ToEventJSON(e *ledger.Entry, start time.Time) EventJSON {
	f := e.Fields
	if f == nil {
		f = map[string]any{}
	}
	return EventJSON{e.Time, float64(e.Time.Sub(start).Microseconds()) / 1000, e.Seq, e.Phase, e.Event, e.Origin, f}
}

// AnswerJSON is an answer to one of why's questions with its evidence as an
// EventJSON.
type AnswerJSON struct {
	verdict.Answer
	Evidence *EventJSON `json:"evidence"`
}

// ToAnswerJSON is a as --json prints it, its evidence found in es.
func ToAnswerJSON(a verdict.Answer, es []ledger.Entry) AnswerJSON {
	aj := AnswerJSON{Answer: a}
	if e := a.Evidence.Find(es); e != nil {
		ev := ToEventJSON(e, es[0].Time)
		aj.Evidence = &ev
	}
	return aj
}
