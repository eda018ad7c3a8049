package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

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
			Files   []string  `json:"files"`
			Records int       `json:"records"`
			Skipped int       `json:"skipped_lines"`
			Lost    int       `json:"records_lost"`
			Runs    []runJSON `json:"runs"`
		}{nonNil(d.files), d.sum.Records, d.skipped, d.sum.Lost, make([]runJSON, 0, len(runs))}
		for _, r := range runs {
			out.Runs = append(out.Runs, runJSON{r, d.short[r.ID]})
		}
		return l.writeJSON(out)
	}
	p := report.Painter(l.color)
	// On a narrow terminal: the noise count, the generation, the date, the
	// calls, the tools, the exit, the last event, the start time and the
	// duration give way, in that order, and WHY goes under its row when it
	// would be cut short in it. --wide and pipes get them all on one line.
	t := &report.Table{Below: true, Steps: []report.FitStep{{Col: 10, Drop: true}, {Col: 4, Drop: true}, {Col: 1, Drop: false}, {Col: 9, Drop: true}, {Col: 8, Drop: true}, {Col: 11, Drop: true}, {Col: 7, Drop: true}, {Col: 1, Drop: true}, {Col: 5, Drop: true}}}
	t.Add(report.Cell{Text: ""}, report.Cell{Text: "STARTED"}, report.Cell{Text: "SERVER"}, report.Cell{Text: "RUN"}, report.Cell{Text: "GEN", Right: true},
		report.Cell{Text: "DURATION", Right: true}, report.Cell{Text: "OUTCOME"}, report.Cell{Text: "LAST EVENT"}, report.Cell{Text: "TOOLS", Right: true},
		report.Cell{Text: "CALLS ok/isErr/err"}, report.Cell{Text: "NOISE", Right: true}, report.Cell{Text: "EXIT"}, report.Cell{Text: "WHY"})
	failed, running := 0, 0
	for i := range runs {
		r := &runs[i]
		mark := ""
		if r.Failed {
			mark = "!"
			failed++
		}
		if r.Alive {
			running++
		}
		gen := "-"
		if r.Generation > 0 {
			gen = strconv.Itoa(r.Generation)
		}
		server := r.Server
		if r.Origin == phases.OriginProbe {
			server += " (probe)"
		}
		t.Add(report.Cell{Text: mark, Style: report.StyleBoldRed},
			report.Cell{Text: r.Start.In(l.loc).Format("2006-01-02 15:04:05"), Short: r.Start.In(l.loc).Format("01-02 15:04")},
			report.Cell{Text: server},
			report.Cell{Text: d.short[r.ID]},
			report.Cell{Text: gen, Right: true},
			report.Cell{Text: verdict.FormatMS(r.DurationMS), Right: true},
			report.Cell{Text: r.Outcome, Style: report.OutcomeStyle(&r.Verdict)},
			report.Cell{Text: r.LastEvent},
			report.Cell{Text: toolsText(r), Right: true},
			report.Cell{Text: callsText(r)},
			report.Cell{Text: strconv.Itoa(r.Noise), Right: true, Style: map[bool]string{true: report.StyleYellow}[r.Noise > 0]},
			report.Cell{Text: report.ExitText(r), Style: map[bool]string{true: report.StyleCyan}[r.Alive]},
			report.Cell{Text: report.OneLine(r.Reason, 160)})
	}
	if len(runs) > 0 {
		t.Write(l.c.stdout, p, l.width)
	}
	parts := []string{fmt.Sprintf("%d runs (%d failed, %d running) in %d files", len(runs), failed, running, len(d.files))}
	if d.skipped > 0 {
		parts = append(parts, verdict.Plural(d.skipped, "line")+" skipped (torn or not ledger records)")
	}
	if d.sum.Lost > 0 {
		parts = append(parts, verdict.Plural(d.sum.Lost, "record")+" lost by the shims (records_lost)")
	}
	sep := "; "
	if l.width > 0 && utf8.RuneCountInString(strings.Join(parts, sep)) > l.width {
		sep = ";\n" // a part per line rather than one wrapped by the terminal
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = p.Paint(report.StyleYellow, parts[i])
	}
	fmt.Fprintln(l.c.stdout, strings.Join(parts, sep))
	return 0
}

// runJSON is a run as --json prints it.
type runJSON struct {
	report.Run
	Short string `json:"short"`
}

func toolsText(r *report.Run) string {
	if r.Tools == nil {
		return "-"
	}
	return strconv.Itoa(*r.Tools)
}

func callsText(r *report.Run) string {
	c := r.Calls
	if c.Received == 0 && c.OK+c.IsError+c.Error == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d/%d", c.OK, c.IsError, c.Error)
}
