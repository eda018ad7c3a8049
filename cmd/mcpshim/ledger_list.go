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
	p := painter(l.color)
	// On a narrow terminal: the noise count, the generation, the date, the
	// calls, the tools, the exit, the last event, the start time and the
	// duration give way, in that order, and WHY goes under its row when it
	// would be cut short in it. --wide and pipes get them all on one line.
	t := &table{below: true, steps: []fitStep{{10, true}, {4, true}, {1, false}, {9, true}, {8, true}, {11, true}, {7, true}, {1, true}, {5, true}}}
	t.add(cell{text: ""}, cell{text: "STARTED"}, cell{text: "SERVER"}, cell{text: "RUN"}, cell{text: "GEN", right: true},
		cell{text: "DURATION", right: true}, cell{text: "OUTCOME"}, cell{text: "LAST EVENT"}, cell{text: "TOOLS", right: true},
		cell{text: "CALLS ok/isErr/err"}, cell{text: "NOISE", right: true}, cell{text: "EXIT"}, cell{text: "WHY"})
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
		t.add(cell{text: mark, style: styleBoldRed},
			cell{text: r.Start.In(l.loc).Format("2006-01-02 15:04:05"), short: r.Start.In(l.loc).Format("01-02 15:04")},
			cell{text: server},
			cell{text: d.short[r.ID]},
			cell{text: gen, right: true},
			cell{text: verdict.FormatMS(r.DurationMS), right: true},
			cell{text: r.Outcome, style: outcomeStyle(&r.Verdict)},
			cell{text: r.LastEvent},
			cell{text: toolsText(r), right: true},
			cell{text: callsText(r)},
			cell{text: strconv.Itoa(r.Noise), right: true, style: map[bool]string{true: styleYellow}[r.Noise > 0]},
			cell{text: report.ExitText(r), style: map[bool]string{true: styleCyan}[r.Alive]},
			cell{text: report.OneLine(r.Reason, 160)})
	}
	if len(runs) > 0 {
		t.write(l.c.stdout, p, l.width)
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
		parts[i] = p.paint(styleYellow, parts[i])
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
