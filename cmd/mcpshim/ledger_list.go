package main

import "github.com/mcpshim-dev/mcpshim/report"

// list prints one row per run, newest last.
func (l *ledgerCmd) list(args []string) int {
	paths, err := l.flags("", args, allFilters, nil)
	if err != nil {
		return usageStatus(err)
	}
	d, runs, err := l.loadKept(paths)
	if err != nil {
		return l.fail(err)
	}
	if l.json {
		out := struct {
			Files   []string         `json:"files"`
			Records int              `json:"records"`
			Skipped int              `json:"skipped_lines"`
			Lost    int              `json:"records_lost"`
			Runs    []report.RunJSON `json:"runs"`
		}{nonNil(d.Files), d.Sum.Records, d.Skipped, d.Sum.Lost, make([]report.RunJSON, 0, len(runs))}
		for _, r := range runs {
			out.Runs = append(out.Runs, report.RunJSON{Run: r, Short: d.Short[r.ID]})
		}
		return l.writeJSON(out)
	}
	l.view().Runs(l.c.stdout, d, runs)
	return 0
}
