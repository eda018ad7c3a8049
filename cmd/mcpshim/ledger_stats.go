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
		if (l.server == "" || st.Server == l.server) && (st.Runs > 0 || st.Calls > 0 || st.Restarts > 0) {
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
	p := painter(l.color)
	// Narrow: ZERO-TOOL, P99, ISERROR, RESTARTS, P50 and P95 give way, in that order.
	t := &table{steps: []fitStep{{5, true}, {11, true}, {8, true}, {4, true}, {9, true}, {10, true}}}
	t.add(cell{text: "SERVER / tool"}, cell{text: "RUNS", right: true}, cell{text: "FAILED", right: true}, cell{text: "OUTCOMES"}, cell{text: "RESTARTS", right: true},
		cell{text: "ZERO-TOOL", right: true}, cell{text: "CALLS", right: true}, cell{text: "ERROR", right: true},
		cell{text: "ISERROR", right: true}, cell{text: "P50", right: true}, cell{text: "P95", right: true}, cell{text: "P99", right: true})
	for _, st := range servers {
		t.add(append([]cell{{text: st.Server, style: styleBold}, {text: strconv.Itoa(st.Runs), right: true},
			{text: strconv.Itoa(st.Failed), right: true, style: map[bool]string{true: styleRed}[st.Failed > 0]},
			{text: outcomesText(st.Outcomes)}, {text: strconv.Itoa(st.Restarts), right: true},
			{text: strconv.Itoa(st.ZeroToolDiscoveries), right: true}}, callCells(st.CallStats)...)...)
		for _, tool := range st.Tools {
			name := tool.Tool
			if name == "" {
				name = "(unknown)"
			}
			t.add(append([]cell{{text: "  " + name}, {}, {}, {}, {}, {}}, callCells(tool.CallStats)...)...)
		}
	}
	if len(servers) > 0 {
		t.write(l.c.stdout, p, l.width)
	}
	fmt.Fprintf(l.c.stdout, "%s, %s in %d files", verdict.Plural(len(servers), "server"), verdict.Plural(d.Records, "record"), len(d.files))
	if d.Skipped > 0 {
		fmt.Fprintf(l.c.stdout, "; %s skipped", verdict.Plural(d.Skipped, "line"))
	}
	fmt.Fprintln(l.c.stdout, "; latency percentiles within 3%")
	return 0
}

func callCells(c report.CallStats) []cell {
	rate := func(r float64, style string) cell {
		if c.Calls == 0 {
			return cell{text: "-", right: true}
		}
		if r == 0 {
			style = ""
		}
		return cell{text: fmt.Sprintf("%.1f%%", 100*r), right: true, style: style}
	}
	out := []cell{{text: strconv.Itoa(c.Calls), right: true}, rate(c.ErrorRate, styleRed), rate(c.IsErrorRate, styleYellow)}
	if c.Latency == nil {
		return append(out, cell{text: "-", right: true}, cell{text: "-", right: true}, cell{text: "-", right: true})
	}
	for _, v := range []float64{c.Latency.P50, c.Latency.P95, c.Latency.P99} {
		out = append(out, cell{text: verdict.FormatMS(v), right: true})
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
