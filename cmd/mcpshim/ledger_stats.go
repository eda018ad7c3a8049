package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// stats prints calls, error rates, latency percentiles, restarts and
// zero-tool discoveries per server and per tool.
func (l *ledgerCmd) stats(args []string) int {
	paths, err := l.flags("stats", args, filterServer|filterSince, nil)
	if err != nil {
		return usageStatus(err)
	}
	// --since counts the runs started since and the calls made since. No
	// run is kept: memory grows with the servers and tools.
	d, err := l.read(paths, l.filtered())
	if err != nil {
		return l.fail(err)
	}
	var servers []report.ServerStats
	for _, st := range d.Stats() {
		if l.server(st.Server) && (st.Runs > 0 || st.Calls > 0 || st.Restarts > 0) {
			servers = append(servers, st)
		}
	}
	if l.json {
		return l.writeJSON(struct {
			Records int                  `json:"records"`
			Skipped int                  `json:"skipped_lines"`
			Servers []report.ServerStats `json:"servers"`
		}{d.Records, d.Skipped, nonNil(servers)})
	}
	p := report.Painter(l.color)
	// Narrow: ZERO-TOOL, P99, ISERROR, RESTARTS, P50 and P95 give way, in that order.
	t := &report.Table{Steps: []report.FitStep{{Col: 5, Drop: true}, {Col: 11, Drop: true}, {Col: 8, Drop: true}, {Col: 4, Drop: true}, {Col: 9, Drop: true}, {Col: 10, Drop: true}}}
	t.Add(report.Cell{Text: "SERVER / tool"}, report.Cell{Text: "RUNS", Right: true}, report.Cell{Text: "FAILED", Right: true}, report.Cell{Text: "OUTCOMES"}, report.Cell{Text: "RESTARTS", Right: true},
		report.Cell{Text: "ZERO-TOOL", Right: true}, report.Cell{Text: "CALLS", Right: true}, report.Cell{Text: "ERROR", Right: true},
		report.Cell{Text: "ISERROR", Right: true}, report.Cell{Text: "P50", Right: true}, report.Cell{Text: "P95", Right: true}, report.Cell{Text: "P99", Right: true})
	for _, st := range servers {
		t.Add(append([]report.Cell{{Text: st.Server, Style: report.StyleBold}, {Text: strconv.Itoa(st.Runs), Right: true},
			{Text: strconv.Itoa(st.Failed), Right: true, Style: map[bool]string{true: report.StyleRed}[st.Failed > 0]},
			{Text: outcomesText(st.Outcomes)}, {Text: strconv.Itoa(st.Restarts), Right: true},
			{Text: strconv.Itoa(st.ZeroToolDiscoveries), Right: true}}, callCells(st.CallStats)...)...)
		for _, tool := range st.Tools {
			name := tool.Tool
			if name == "" {
				name = "(unknown)"
			}
			t.Add(append([]report.Cell{{Text: "  " + name}, {}, {}, {}, {}, {}}, callCells(tool.CallStats)...)...)
		}
	}
	if len(servers) > 0 {
		t.Write(l.c.stdout, p, l.width)
	}
	fmt.Fprintf(l.c.stdout, "%s, %s in %d files", verdict.Plural(len(servers), "server"), verdict.Plural(d.Records, "record"), len(d.files))
	if d.Skipped > 0 {
		fmt.Fprintf(l.c.stdout, "; %s skipped", verdict.Plural(d.Skipped, "line"))
	}
	fmt.Fprintln(l.c.stdout, "; latency percentiles within 3%")
	return 0
}

func callCells(c report.CallStats) []report.Cell {
	rate := func(r float64, style string) report.Cell {
		if c.Calls == 0 {
			return report.Cell{Text: "-", Right: true}
		}
		if r == 0 {
			style = ""
		}
		return report.Cell{Text: fmt.Sprintf("%.1f%%", 100*r), Right: true, Style: style}
	}
	out := []report.Cell{{Text: strconv.Itoa(c.Calls), Right: true}, rate(c.ErrorRate, report.StyleRed), rate(c.IsErrorRate, report.StyleYellow)}
	if c.Latency == nil {
		return append(out, report.Cell{Text: "-", Right: true}, report.Cell{Text: "-", Right: true}, report.Cell{Text: "-", Right: true})
	}
	for _, v := range []float64{c.Latency.P50, c.Latency.P95, c.Latency.P99} {
		out = append(out, report.Cell{Text: verdict.FormatMS(v), Right: true})
	}
	return out
}

// outcomesText is "ENDED 3, CRASHED 1", most frequent first.
func outcomesText(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprintf("%s %d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}
