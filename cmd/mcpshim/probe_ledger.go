package main

import (
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/probe"
)

// recordProbe appends one probe of a server to that server's ledger with
// origin probe, so `mcpshim ledger` shows probe history beside the shim's
// runs: the records the probe's verdict was judged from, and the result.
// dir "" is the default ledger directory; "off" records nothing.
func recordProbe(c *cli, dir, shimID string, r probe.Result) {
	if dir == "off" || r.Cached {
		return
	}
	if dir == "" {
		dir = ledger.DefaultDir(c.getenv)
	}
	l, err := ledger.Open(ledger.Options{Path: ledger.PathIn(dir, r.Server), Shim: shimID, Server: r.Server})
	if err != nil {
		return // the probe's own report is what the user reads; the ledger is a bonus
	}
	defer l.Close()
	run := ledger.NewID("run", r.Started)
	for _, rec := range r.Records() {
		rec.Run = run
		l.Write(&rec)
	}
	l.Write(&ledger.Record{Time: r.Started.Add(r.Elapsed), Run: run, PID: r.PID, Origin: phases.OriginProbe, Phase: phases.LedgerPhase,
		Event: phases.ProbeResult, Fields: []ledger.Field{ledger.F("outcome", string(r.Outcome)), ledger.F("detail", r.Detail),
			ledger.F("elapsed_ms", r.Elapsed), ledger.F("attempts", r.Attempts), ledger.F("transport", r.Transport)}})
}
