package main

import (
	"fmt"

	"github.com/mcpshim-dev/mcpshim/report"
)

// show prints one run's timeline: phases grouped, relative times, each
// request with its latency, the stderr tail, restarts, and a diagnosis.
func (l *ledgerCmd) show(args []string) int {
	pos, err := l.flags("show", args, 0, nil)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger show: which run? (mcpshim ledger lists them)")
		return exitUsage
	}
	d, err := l.load(pos[1:])
	if err != nil {
		return l.fail(err)
	}
	r, err := report.Resolve(d.Runs, pos[0])
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger show: %v\n", err)
		return 1
	}
	es := l.entries(d, map[string]bool{r.ID: true})[r.ID]
	if l.json {
		out := struct {
			Run       report.RunJSON     `json:"run"`
			Diagnosis string             `json:"diagnosis"`
			Advice    string             `json:"advice"`
			Events    []report.EventJSON `json:"events"`
			Skipped   int                `json:"skipped_lines"`
		}{report.RunJSON{Run: *r, Short: d.Short[r.ID]}, r.Reason, r.Advice, make([]report.EventJSON, 0, len(es)), d.Skipped}
		for i := range es {
			out.Events = append(out.Events, report.ToEventJSON(&es[i], es[0].Time))
		}
		return l.writeJSON(out)
	}
	l.view().Show(l.c.stdout, d, r, es)
	return 0
}
