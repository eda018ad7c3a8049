package witness

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// ServerEvents folds the phase events a server reports on its stderr (a
// logfmt line or a JSON object with phase and event) into the ledger under
// the current run, through emit (ServerClaim). The line still reaches the
// client's log unchanged.
func ServerEvents(emit func(ledger.Record)) func(run string, pid int, line []byte) {
	return func(run string, pid int, line []byte) {
		if ev, ok := ParseServerEvent(line); ok {
			emit(ServerClaim(time.Now(), run, pid, ev.Phase, ev.Event, ev.Fields))
		}
	}
}

// Record starts the egress witness with its attempts and results handed to
// emit as records: every outbound connection with the phase the run was in
// and the tool calls in flight (the recorder adds those).
func Record(emit func(ledger.Record), deny []string) (*Witness, error) {
	return Start(Config{
		Deny: deny,
		OnAttempt: func(a Attempt) {
			emit(ledger.Record{Time: a.Start, Origin: "witness", Phase: phases.Execution, Event: phases.ExternalAttempt,
				Fields: []ledger.Field{ledger.F("action_id", a.ID), ledger.F(phases.FieldHost, a.Host), ledger.F(phases.FieldPort, a.Port),
					ledger.F(phases.FieldScheme, a.Scheme), ledger.F(phases.FieldMethod, a.Method)}})
		},
		OnResult: func(r Result) {
			event := phases.ExternalResult
			if r.Status == StatusDenied {
				event = phases.ExternalDenied
			}
			fields := []ledger.Field{ledger.F("action_id", r.ID), ledger.F(phases.FieldStatus, r.Status), ledger.F("bytes_out", r.BytesOut),
				ledger.F("bytes_in", r.BytesIn), ledger.F(phases.FieldDurationMS, r.Duration), ledger.F("tls", r.TLS)}
			if r.HTTPStatus != 0 {
				fields = append(fields, ledger.F("http_status", r.HTTPStatus))
			}
			if r.Err != "" {
				fields = append(fields, ledger.F(phases.FieldError, redact.String(r.Err)))
			}
			emit(ledger.Record{Time: time.Now(), Origin: "witness", Phase: phases.Execution, Event: event, Fields: fields})
		},
	})
}
