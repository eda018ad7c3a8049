package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/tap"
	"github.com/mcpshim-dev/mcpshim/witness"
)

// serverEvents folds the phase events a server reports on its stderr (seed
// 002's logfmt or a JSON object with phase and event) into the ledger under
// the current run (witness.ServerClaim). The line still reaches the client's
// log unchanged.
func serverEvents(rec *tap.Recorder) func(run string, pid int, line []byte) {
	return func(run string, pid int, line []byte) {
		if ev, ok := witness.ParseServerEvent(line); ok {
			rec.Emit(witness.ServerClaim(time.Now(), run, pid, ev.Phase, ev.Event, ev.Fields))
		}
	}
}

// startWitness starts the egress witness: a loopback proxy the child is
// pointed at, recording every outbound connection with the phase the run
// was in and the tool calls in flight.
func startWitness(rec *tap.Recorder, deny []string) (*witness.Witness, error) {
	w, err := witness.Start(witness.Config{
		Deny: deny,
		OnAttempt: func(a witness.Attempt) {
			rec.Emit(ledger.Record{Time: a.Start, Origin: "witness", Phase: phases.Execution, Event: phases.ExternalAttempt,
				Fields: []ledger.Field{ledger.F("action_id", a.ID), ledger.F("host", a.Host), ledger.F("port", a.Port),
					ledger.F("scheme", a.Scheme), ledger.F("method", a.Method)}})
		},
		OnResult: func(r witness.Result) {
			event := phases.ExternalResult
			if r.Status == witness.StatusDenied {
				event = phases.ExternalDenied
			}
			fields := []ledger.Field{ledger.F("action_id", r.ID), ledger.F("status", r.Status), ledger.F("bytes_out", r.BytesOut),
				ledger.F("bytes_in", r.BytesIn), ledger.F("duration_ms", r.Duration), ledger.F("tls", r.TLS)}
			if r.HTTPStatus != 0 {
				fields = append(fields, ledger.F("http_status", r.HTTPStatus))
			}
			if r.Err != "" {
				fields = append(fields, ledger.F("error", redact.String(r.Err)))
			}
			rec.Emit(ledger.Record{Time: time.Now(), Origin: "witness", Phase: phases.Execution, Event: event, Fields: fields})
		},
	})
	if err != nil {
		return nil, fmt.Errorf("egress witness: %w", err)
	}
	return w, nil
}

// hostList is a repeatable, comma-separated flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*h = append(*h, s)
		}
	}
	return nil
}
