package main

import (
	"github.com/mcpshim-dev/mcpshim/report"
)

// stats prints calls, error rates, latency percentiles, restarts and
// zero-tool discoveries per server and per tool.
func (l *ledgerCmd) stats(args []string) int {
	paths, err := l.flags("stats", args, filterServer|filterSince, nil)
	if err != nil {
		return usageStatus(err)
	}
	d, runs, err := l.loadKept(paths)
	if err != nil {
		return l.fail(err)
	}
	// --since counts the runs started since and the calls made since.
	var servers []report.ServerStats
	for _, st := range d.Sum.Stats(runs) {
		if (l.server == "" || st.Server == l.server) && (st.Runs > 0 || st.Calls > 0 || st.Restarts > 0) {
			servers = append(servers, st)
		}
	}
	if l.json {
		return l.writeJSON(struct {
			Records int                  `json:"records"`
			Skipped int                  `json:"skipped_lines"`
			Servers []report.ServerStats `json:"servers"`
		}{d.Sum.Records, d.Skipped, nonNil(servers)})
	}
	l.view().Stats(l.c.stdout, d, servers)
	return 0
}
