package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// why answers four questions (did it launch, initialize, list tools, reach
// out?) for one run, or for the latest run
// of each server.
func (l *ledgerCmd) why(args []string) int {
	pos, err := l.flags("why", args, allFilters, nil)
	if err != nil {
		return usageStatus(err)
	}
	// A first positional that is not a path (nor -, stdin) is a run.
	var runArg string
	if len(pos) > 0 {
		if _, err := os.Stat(pos[0]); err != nil && pos[0] != "-" {
			runArg, pos = pos[0], pos[1:]
		}
	}
	// The first pass keeps no run: every run's id (for the short ids and a
	// typed run) and, with no RUN, the latest run of each server the filters
	// keep and its ledger. The second reads the records of the runs picked
	// (from their ledgers alone when known), and judges them.
	type pick struct {
		id     string
		start  time.Time
		ledger []string
	}
	var mu sync.Mutex
	latest := map[string]*pick{}
	opts := report.ReadOptions{Keep: func(*report.Run) bool { return false }}
	if runArg == "" {
		opts = l.filtered()
		opts.Run = func(r *report.Run, ledger []string) {
			mu.Lock()
			defer mu.Unlock()
			if cur := latest[r.Server]; cur == nil || cur.start.Before(r.Start) || cur.start.Equal(r.Start) && cur.id < r.ID {
				latest[r.Server] = &pick{r.ID, r.Start, ledger}
			}
		}
	}
	d, err := l.read(pos, opts)
	if err != nil {
		return l.fail(err)
	}
	var ids []string
	files := d.files
	if runArg != "" {
		id, err := d.IDs.Resolve(runArg)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger why: %v\n", err)
			return 1
		}
		ids = append(ids, id)
	} else {
		in := map[string]bool{}
		for _, p := range latest {
			ids = append(ids, p.id)
			for _, f := range p.ledger {
				in[f] = true
			}
		}
		files = slices.DeleteFunc(slices.Clone(files), func(f string) bool { return !in[f] })
	}
	if len(ids) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger why: no run matches")
		return 1
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	entries, next := l.records(files, want, math.MaxInt)
	var picked []*report.Run
	for _, id := range ids {
		s := report.NewSummary()
		for i := range entries[id] {
			s.Add(&entries[id][i])
		}
		for _, r := range s.Runs(l.now, proc.Alive) {
			r.NextRun = next[r.ID]
			picked = append(picked, &r)
		}
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].Server < picked[j].Server })
	type runAnswers struct {
		Run     runJSON      `json:"run"`
		Answers []answerJSON `json:"answers"`
	}
	out := struct {
		Runs    []runAnswers `json:"runs"`
		Skipped int          `json:"skipped_lines"`
	}{Skipped: d.Skipped}
	p := report.Painter(l.color)
	for n, r := range picked {
		es := entries[r.ID]
		answers := r.Answers
		if l.json {
			ra := runAnswers{Run: runJSON{*r, d.short(r.ID)}}
			for _, a := range answers {
				aj := answerJSON{Answer: a}
				if e := a.Evidence.Find(es); e != nil {
					ev := toEventJSON(e, es[0].Time)
					aj.Evidence = &ev
				}
				ra.Answers = append(ra.Answers, aj)
			}
			out.Runs = append(out.Runs, ra)
			continue
		}
		if n > 0 {
			fmt.Fprintln(l.c.stdout)
		}
		fmt.Fprintf(l.c.stdout, "%s · run %s · %s · %s\n", p.Paint(report.StyleBold, termsafe.String(r.Server)), termsafe.String(d.short(r.ID)),
			r.Start.In(l.loc).Format("2006-01-02 15:04:05"), p.Paint(report.OutcomeStyle(&r.Verdict), r.Outcome))
		// A narrow terminal gets the reason and the evidence on lines of
		// their own under the answer, cut to its width.
		narrow := l.width > 0 && l.width < 2+38+1+7+2+60
		for _, a := range answers {
			answer := p.Paint(report.AnswerStyle(a.Answer), fmt.Sprintf("%-7s", a.Answer))
			evidence := ""
			if e := a.Evidence.Find(es); e != nil {
				evidence = "evidence: " + report.OneLine(l.evidenceLine(e), 110)
			}
			if narrow {
				fmt.Fprintf(l.c.stdout, "  %-38s %s\n      %s\n", a.Question, strings.TrimRight(answer, " "), l.fit(termsafe.String(a.Reason), 6))
				if evidence != "" {
					fmt.Fprintf(l.c.stdout, "      %s\n", p.Paint(report.StyleDim, l.fit(evidence, 6)))
				}
				continue
			}
			fmt.Fprintf(l.c.stdout, "  %-38s %s  %s\n", a.Question, answer, l.fit(termsafe.String(a.Reason), 2+38+1+7+2))
			if evidence != "" {
				fmt.Fprintf(l.c.stdout, "  %-38s %s\n", "", p.Paint(report.StyleDim, l.fit(evidence, 2+38+1)))
			}
		}
	}
	if l.json {
		return l.writeJSON(out)
	}
	if d.Skipped > 0 {
		fmt.Fprintf(l.c.stdout, "\n%s skipped in the ledger files (torn or not ledger records)\n", verdict.Plural(d.Skipped, "line"))
	}
	return 0
}

// answerJSON is an Answer with its evidence as an EVENT.
type answerJSON struct {
	verdict.Answer
	Evidence *eventJSON `json:"evidence"`
}
