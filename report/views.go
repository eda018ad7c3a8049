package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// View is how the text views are drawn: in colour or not, in a time zone,
// and fitted to a terminal's width (0: every column and whole lines).
type View struct {
	Color bool
	Loc   *time.Location
	Width int
}

// Runs is the run table, one row per run, and the line that counts them.
func (v View) Runs(w io.Writer, d *Ledgers, runs []Run) {
	p := Painter(v.Color)
	// On a narrow terminal: the noise count, the generation, the date, the
	// calls, the tools, the exit, the last event, the start time and the
	// duration give way, in that order, and WHY goes under its row when it
	// would be cut short in it. --wide and pipes get them all on one line.
	t := &Table{Below: true, Steps: []FitStep{{Col: 10, Drop: true}, {Col: 4, Drop: true}, {Col: 1, Drop: false}, {Col: 9, Drop: true}, {Col: 8, Drop: true}, {Col: 11, Drop: true}, {Col: 7, Drop: true}, {Col: 1, Drop: true}, {Col: 5, Drop: true}}}
	t.Add(Cell{Text: ""}, Cell{Text: "STARTED"}, Cell{Text: "SERVER"}, Cell{Text: "RUN"}, Cell{Text: "GEN", Right: true},
		Cell{Text: "DURATION", Right: true}, Cell{Text: "OUTCOME"}, Cell{Text: "LAST EVENT"}, Cell{Text: "TOOLS", Right: true},
		Cell{Text: "CALLS ok/isErr/err"}, Cell{Text: "NOISE", Right: true}, Cell{Text: "EXIT"}, Cell{Text: "WHY"})
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
		t.Add(Cell{Text: mark, Style: StyleBoldRed},
			Cell{Text: r.Start.In(v.Loc).Format("2006-01-02 15:04:05"), Short: r.Start.In(v.Loc).Format("01-02 15:04")},
			Cell{Text: server},
			Cell{Text: d.Short[r.ID]},
			Cell{Text: gen, Right: true},
			Cell{Text: verdict.FormatMS(r.DurationMS), Right: true},
			Cell{Text: r.Outcome, Style: OutcomeStyle(&r.Verdict)},
			Cell{Text: r.LastEvent},
			Cell{Text: toolsText(r), Right: true},
			Cell{Text: callsText(r)},
			Cell{Text: strconv.Itoa(r.Noise), Right: true, Style: map[bool]string{true: StyleYellow}[r.Noise > 0]},
			Cell{Text: ExitText(r), Style: map[bool]string{true: StyleCyan}[r.Alive]},
			Cell{Text: OneLine(r.Reason, 160)})
	}
	if len(runs) > 0 {
		t.Write(w, p, v.Width)
	}
	parts := []string{fmt.Sprintf("%d runs (%d failed, %d running) in %d files", len(runs), failed, running, len(d.Files))}
	if d.Skipped > 0 {
		parts = append(parts, verdict.Plural(d.Skipped, "line")+" skipped (torn or not ledger records)")
	}
	if d.Sum.Lost > 0 {
		parts = append(parts, verdict.Plural(d.Sum.Lost, "record")+" lost by the shims (records_lost)")
	}
	sep := "; "
	if v.Width > 0 && utf8.RuneCountInString(strings.Join(parts, sep)) > v.Width {
		sep = ";\n" // a part per line rather than one wrapped by the terminal
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = p.Paint(StyleYellow, parts[i])
	}
	fmt.Fprintln(w, strings.Join(parts, sep))
}

// Stats is the table of calls, error rates, latency percentiles, restarts
// and zero-tool discoveries per server and per tool.
func (v View) Stats(w io.Writer, d *Ledgers, servers []ServerStats) {
	p := Painter(v.Color)
	// Narrow: ZERO-TOOL, P99, ISERROR, RESTARTS, P50 and P95 give way, in that order.
	t := &Table{Steps: []FitStep{{Col: 5, Drop: true}, {Col: 11, Drop: true}, {Col: 8, Drop: true}, {Col: 4, Drop: true}, {Col: 9, Drop: true}, {Col: 10, Drop: true}}}
	t.Add(Cell{Text: "SERVER / tool"}, Cell{Text: "RUNS", Right: true}, Cell{Text: "FAILED", Right: true}, Cell{Text: "OUTCOMES"}, Cell{Text: "RESTARTS", Right: true},
		Cell{Text: "ZERO-TOOL", Right: true}, Cell{Text: "CALLS", Right: true}, Cell{Text: "ERROR", Right: true},
		Cell{Text: "ISERROR", Right: true}, Cell{Text: "P50", Right: true}, Cell{Text: "P95", Right: true}, Cell{Text: "P99", Right: true})
	for _, st := range servers {
		t.Add(append([]Cell{{Text: st.Server, Style: StyleBold}, {Text: strconv.Itoa(st.Runs), Right: true},
			{Text: strconv.Itoa(st.Failed), Right: true, Style: map[bool]string{true: StyleRed}[st.Failed > 0]},
			{Text: outcomesText(st.Outcomes)}, {Text: strconv.Itoa(st.Restarts), Right: true},
			{Text: strconv.Itoa(st.ZeroToolDiscoveries), Right: true}}, callCells(st.CallStats)...)...)
		for _, tool := range st.Tools {
			name := tool.Tool
			if name == "" {
				name = "(unknown)"
			}
			t.Add(append([]Cell{{Text: "  " + name}, {}, {}, {}, {}, {}}, callCells(tool.CallStats)...)...)
		}
	}
	if len(servers) > 0 {
		t.Write(w, p, v.Width)
	}
	fmt.Fprintf(w, "%s, %s in %d files", verdict.Plural(len(servers), "server"), verdict.Plural(d.Sum.Records, "record"), len(d.Files))
	if d.Skipped > 0 {
		fmt.Fprintf(w, "; %s skipped", verdict.Plural(d.Skipped, "line"))
	}
	fmt.Fprintln(w, "; latency percentiles within 3%")
}

// Why answers the four questions for each run picked, with the evidence
// from its records (entries, by run id).
func (v View) Why(w io.Writer, d *Ledgers, picked []*Run, entries map[string][]ledger.Entry) {
	p := Painter(v.Color)
	for n, r := range picked {
		es := entries[r.ID]
		answers := r.Answers
		if n > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s · run %s · %s · %s\n", p.Paint(StyleBold, termsafe.String(r.Server)), termsafe.String(d.Short[r.ID]),
			r.Start.In(v.Loc).Format("2006-01-02 15:04:05"), p.Paint(OutcomeStyle(&r.Verdict), r.Outcome))
		// A narrow terminal gets the reason and the evidence on lines of
		// their own under the answer, cut to its width.
		narrow := v.Width > 0 && v.Width < 2+38+1+7+2+60
		for _, a := range answers {
			answer := p.Paint(AnswerStyle(a.Answer), fmt.Sprintf("%-7s", a.Answer))
			evidence := ""
			if e := a.Evidence.Find(es); e != nil {
				evidence = "evidence: " + OneLine(v.evidenceLine(e), 110)
			}
			if narrow {
				fmt.Fprintf(w, "  %-38s %s\n      %s\n", a.Question, strings.TrimRight(answer, " "), v.fit(termsafe.String(a.Reason), 6))
				if evidence != "" {
					fmt.Fprintf(w, "      %s\n", p.Paint(StyleDim, v.fit(evidence, 6)))
				}
				continue
			}
			fmt.Fprintf(w, "  %-38s %s  %s\n", a.Question, answer, v.fit(termsafe.String(a.Reason), 2+38+1+7+2))
			if evidence != "" {
				fmt.Fprintf(w, "  %-38s %s\n", "", p.Paint(StyleDim, v.fit(evidence, 2+38+1)))
			}
		}
	}
	if d.Skipped > 0 {
		fmt.Fprintf(w, "\n%s skipped in the ledger files (torn or not ledger records)\n", verdict.Plural(d.Skipped, "line"))
	}
}

// Show is one run's timeline: phases grouped, relative times, each request
// with its latency, the stderr tail, restarts, and a diagnosis.
func (v View) Show(w io.Writer, d *Ledgers, r *Run, es []ledger.Entry) {
	byID := IndexRuns(d.Runs)
	p := Painter(v.Color)
	fmt.Fprintf(w, "%s  %s · generation %d · pid %d · %s\n", p.Paint(StyleBold, termsafe.String(r.ID)), termsafe.String(r.Server), r.Generation, r.PID, termsafe.String(r.Shim))
	fmt.Fprintf(w, "started %s · lasted %s · %s", r.Start.In(v.Loc).Format("2006-01-02 15:04:05.000 MST"),
		verdict.FormatMS(r.DurationMS), p.Paint(OutcomeStyle(&r.Verdict), r.Outcome))
	if r.Alive {
		fmt.Fprint(w, " (still running)")
	}
	fmt.Fprintln(w)
	for _, link := range []struct{ label, id string }{{"previous run", r.PreviousRun}, {"next run", r.NextRun}} {
		if link.id == "" {
			continue
		}
		if o, ok := byID[link.id]; ok {
			about := p.Paint(OutcomeStyle(&o.Verdict), o.Outcome)
			if o.Reason != "" {
				about += ", " + OneLine(o.Reason, 80)
			}
			fmt.Fprintf(w, "%s: %s (%s)\n", link.label, termsafe.String(d.Short[link.id]), about)
		} else {
			fmt.Fprintf(w, "%s: %s (not in these files)\n", link.label, termsafe.String(link.id))
		}
	}
	room := 60 // of each field's value on a terminal; whole with --wide and in a pipe
	if v.Width <= 0 {
		room = math.MaxInt
	}
	var phase phases.Phase
	for i := range es {
		e := &es[i]
		if e.Phase != phase || i == 0 {
			phase = e.Phase
			fmt.Fprintf(w, "\n%s\n", p.Paint(StyleBold, termsafe.String(string(phase))))
		}
		text := FieldsText(e, room, "stderr_tail", "latency_ms")
		if ms, ok := e.Float("latency_ms"); ok {
			text = strings.TrimSpace(text + " " + p.Paint(StyleBold, "latency "+verdict.FormatMS(ms)))
		}
		origin := ""
		if e.Origin != "" {
			origin = p.Paint(StyleDim, " ["+termsafe.String(e.Origin)+"]")
		}
		line := fmt.Sprintf("  %s  %s%s  %s", p.Paint(StyleDim, offset(e.Time.Sub(es[0].Time))), p.Paint(EventStyle(e), termsafe.String(e.Event)), origin, text)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if len(r.StderrTail) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(StyleBold, "stderr tail"))
		for _, s := range r.StderrTail {
			fmt.Fprintf(w, "  | %s\n", termsafe.String(s))
		}
	}
	if d.Skipped > 0 {
		fmt.Fprintf(w, "\n%s skipped in the ledger files (torn or not ledger records)\n", verdict.Plural(d.Skipped, "line"))
	}
	fmt.Fprintf(w, "\n%s %s: %s\n", p.Paint(StyleBold, "diagnosis:"), p.Paint(OutcomeStyle(&r.Verdict), r.Outcome), termsafe.String(r.Reason))
	if r.Advice != "" {
		fmt.Fprintf(w, "%s %s\n", p.Paint(StyleBold, "what to do:"), termsafe.String(r.Advice))
	}
}

func toolsText(r *Run) string {
	if r.Tools == nil {
		return "-"
	}
	return strconv.Itoa(*r.Tools)
}

func callsText(r *Run) string {
	c := r.Calls
	if c.Received == 0 && c.OK+c.IsError+c.Error == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d/%d", c.OK, c.IsError, c.Error)
}

func callCells(c CallStats) []Cell {
	rate := func(r float64, style string) Cell {
		if c.Calls == 0 {
			return Cell{Text: "-", Right: true}
		}
		if r == 0 {
			style = ""
		}
		return Cell{Text: fmt.Sprintf("%.1f%%", 100*r), Right: true, Style: style}
	}
	out := []Cell{{Text: strconv.Itoa(c.Calls), Right: true}, rate(c.ErrorRate, StyleRed), rate(c.IsErrorRate, StyleYellow)}
	if c.Latency == nil {
		return append(out, Cell{Text: "-", Right: true}, Cell{Text: "-", Right: true}, Cell{Text: "-", Right: true})
	}
	for _, v := range []float64{c.Latency.P50, c.Latency.P95, c.Latency.P99} {
		out = append(out, Cell{Text: verdict.FormatMS(v), Right: true})
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

// offset prints a time since the run's first record, right-aligned:
// +1.234s, +2m03.456s.
func offset(d time.Duration) string {
	s := fmt.Sprintf("+%.3fs", d.Seconds())
	if d >= time.Minute {
		s = fmt.Sprintf("+%dm%06.3fs", int(d.Minutes()), d.Seconds()-60*float64(int(d.Minutes())))
	}
	return fmt.Sprintf("%9s", s)
}

// evidenceKeys are the fields that make an event evidence; other events
// show all theirs.
var evidenceKeys = map[string][]string{
	phases.SpawnRequested:      {"egress", "generation", "command"},
	phases.Spawned:             {"pgid", "generation"},
	phases.Exited:              {"exit_code", "signal", "last_event", "handshake", "requested_by_shim"},
	phases.InitializeResponded: {"protocol_version", "server_name", "server_version", "latency_ms"},
	phases.HandshakeReplayed:   {"protocol_version", "latency_ms"},
	phases.ToolsListResponded:  {"tool_count", "tools", "latency_ms"},
}

// evidenceLine is a record as evidence, on one line:
// 15:04:05.000 phase event key=value…
func (v View) evidenceLine(e *ledger.Entry) string {
	fields := FieldsText(e, 40, "stderr_tail")
	if keys, ok := evidenceKeys[e.Event]; ok {
		var parts []string
		for _, k := range keys {
			if val, ok := e.Fields[k]; ok {
				parts = append(parts, k+"="+OneLine(ValueText(val), 40))
			}
		}
		fields = strings.Join(parts, " ")
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", e.Time.In(v.Loc).Format("15:04:05.000"), termsafe.String(string(e.Phase)), termsafe.String(e.Event), fields))
}

// fit cuts s, printed after indent columns, to the terminal's width with
// "…"; whole in a pipe or with --wide, and never below 20 characters.
func (v View) fit(s string, indent int) string {
	if v.Width <= 0 {
		return s
	}
	return OneLine(s, max(v.Width-indent, 20))
}
