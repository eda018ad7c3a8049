package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/mcpshim-dev/mcpshim/report"
)

// why answers seed 002's four questions for one run, or for the latest run
// of each server.
func (l *ledgerCmd) why(args []string) int {
	pos, err := l.flags("why", args, allFilters, nil)
	if err != nil {
		return usageStatus(err)
	}
	// A first positional that is not a path is a run.
	var runArg string
	if len(pos) > 0 {
		if _, err := os.Stat(pos[0]); err != nil {
			runArg, pos = pos[0], pos[1:]
		}
	}
	d, err := l.load(pos)
	if err != nil {
		return l.fail(err)
	}
	var picked []*report.Run
	if runArg != "" {
		r, err := report.Resolve(d.Runs, runArg)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger why: %v\n", err)
			return 1
		}
		picked = append(picked, r)
	} else {
		latest := map[string]*report.Run{}
		for i := range d.Runs {
			if r := &d.Runs[i]; l.keep(r) {
				latest[r.Server] = r // runs are oldest first
			}
		}
		for _, r := range latest {
			picked = append(picked, r)
		}
		sort.Slice(picked, func(i, j int) bool { return picked[i].Server < picked[j].Server })
	}
	if len(picked) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger why: no run matches")
		return 1
	}
	want := map[string]bool{}
	for _, r := range picked {
		want[r.ID] = true
	}
	entries := l.entries(d, want)
	if !l.json {
		l.view().Why(l.c.stdout, d, picked, entries)
		return 0
	}
	type runAnswers struct {
		Run     report.RunJSON      `json:"run"`
		Answers []report.AnswerJSON `json:"answers"`
	}
	out := struct {
		Runs    []runAnswers `json:"runs"`
		Skipped int          `json:"skipped_lines"`
	}{Skipped: d.Skipped}
	for _, r := range picked {
		ra := runAnswers{Run: report.RunJSON{Run: *r, Short: d.Short[r.ID]}}
		for _, a := range r.Answers {
			ra.Answers = append(ra.Answers, report.ToAnswerJSON(a, entries[r.ID]))
		}
		out.Runs = append(out.Runs, ra)
	}
	return l.writeJSON(out)
}
