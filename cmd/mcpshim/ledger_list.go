package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
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
	d, err := l.load(paths, l.filtered())
	if err != nil {
		return l.fail(err)
	}
	if l.json {
		if err := d.writeJSON(l.c.stdout); err != nil {
			return l.fail(err)
		}
		return 0
	}
	p := report.Painter(l.color)
	// On a narrow terminal: the noise count, the generation, the date, the
	// calls, the tools, the exit, the last event, the start time and the
	// duration give way, in that order, and WHY goes under its row when it
	// would be cut short in it. --wide and pipes get them all on one line.
	t := &report.Table{Below: true, Steps: []report.FitStep{{Col: 10, Drop: true}, {Col: 4, Drop: true}, {Col: 1, Drop: false}, {Col: 9, Drop: true}, {Col: 8, Drop: true}, {Col: 11, Drop: true}, {Col: 7, Drop: true}, {Col: 1, Drop: true}, {Col: 5, Drop: true}}}
	t.N = d.runs.Len() + 1
	runs := sync.Pool{New: func() any { return new(report.Run) }}
	t.Row = func(i int, row []report.Cell) []report.Cell {
		if i == 0 {
			return append(row, []report.Cell{{Text: ""}, {Text: "STARTED"}, {Text: "SERVER"}, {Text: "RUN"}, {Text: "GEN", Right: true},
				{Text: "DURATION", Right: true}, {Text: "OUTCOME"}, {Text: "LAST EVENT"}, {Text: "TOOLS", Right: true},
				{Text: "CALLS ok/isErr/err"}, {Text: "NOISE", Right: true}, {Text: "EXIT"}, {Text: "WHY"}}...)
		}
		r := runs.Get().(*report.Run)
		defer runs.Put(r)
		d.runs.Run(i-1, r) // the table shows no next run
		mark := ""
		if r.Failed {
			mark = "!"
		}
		gen := "-"
		if r.Generation > 0 {
			gen = strconv.Itoa(r.Generation)
		}
		server := r.Server
		if r.Origin == phases.OriginProbe {
			server += " (probe)"
		}
		start := r.Start.In(l.loc).Format("2006-01-02 15:04:05")
		return append(row, []report.Cell{{Text: mark, Style: report.StyleBoldRed},
			{Text: start, Short: start[5:16]}, // 01-02 15:04
			{Text: server},
			{Text: d.short(r.ID)},
			{Text: gen, Right: true},
			{Text: verdict.FormatMS(r.DurationMS), Right: true},
			{Text: r.Outcome, Style: report.OutcomeStyle(&r.Verdict)},
			{Text: r.LastEvent},
			{Text: toolsText(r), Right: true},
			{Text: callsText(r)},
			{Text: strconv.Itoa(r.Noise), Right: true, Style: report.StyleIf(r.Noise > 0, report.StyleYellow)},
			{Text: report.ExitText(r), Style: report.StyleIf(r.Alive, report.StyleCyan)},
			{Text: report.OneLine(r.Reason, 160)}}...)
	}
	out := bufio.NewWriterSize(l.c.stdout, 1<<16)
	if d.runs.Len() > 0 {
		if err := t.Write(out, p, l.width); err != nil {
			return l.fail(err)
		}
	}
	parts := []string{fmt.Sprintf("%d runs (%d failed, %d running) in %d files", d.runs.Len(), d.failed, d.running, len(d.files))}
	if d.Skipped > 0 {
		parts = append(parts, verdict.Plural(d.Skipped, "line")+" skipped (torn or not ledger records)")
	}
	if d.Lost > 0 {
		parts = append(parts, verdict.Plural(d.Lost, "record")+" lost by the shims (records_lost)")
	}
	sep := "; "
	if l.width > 0 && utf8.RuneCountInString(strings.Join(parts, sep)) > l.width {
		sep = ";\n" // a part per line rather than one wrapped by the terminal
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = p.Paint(report.StyleYellow, parts[i])
	}
	fmt.Fprintln(out, strings.Join(parts, sep))
	if err := out.Flush(); err != nil {
		return l.fail(err)
	}
	return 0
}

// writeJSON prints the runs as --json does, one at a time: the document
// printJSON would write of {files, records, skipped_lines, records_lost,
// runs}, byte for byte, without a million runs in memory at once.
func (d *ledgerData) writeJSON(w io.Writer) error {
	out := bufio.NewWriterSize(w, 1<<20)
	files, err := json.MarshalIndent(nonNil(d.files), "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "{\n  \"files\": %s,\n  \"records\": %d,\n  \"skipped_lines\": %d,\n  \"records_lost\": %d,\n  \"runs\": [",
		files, d.Records, d.Skipped, d.Lost)
	err = report.Ordered(out, d.runs.Len(), func(dst []byte, i int) ([]byte, error) {
		var r report.Run
		d.run(i, &r)
		return report.AppendJSON(append(dst, ",\n    "[1-min(i, 1):]...), &r, d.short(r.ID), 2)
	})
	if err != nil {
		return err
	}
	if d.runs.Len() > 0 {
		out.WriteString("\n  ")
	}
	out.WriteString("]\n}\n")
	return out.Flush()
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
