package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// show prints one run's timeline: phases grouped, relative times, each
// request with its latency, the stderr tail, restarts, and a diagnosis.
func (l *ledgerCmd) show(args []string) int {
	pos, err := l.flags("show", args, 0, nil)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger show: which run? (mcpshim ledger lists them)")
		return exitUsage
	}
	d, err := l.load(pos[1:], report.ReadOptions{})
	if err != nil {
		return l.fail(err)
	}
	id, err := d.IDs.Resolve(pos[0])
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger show: %v\n", err)
		return 1
	}
	run, _ := d.find(id)
	r := &run
	es := l.entries(d, map[string]bool{r.ID: true})[r.ID]
	if l.json {
		out := struct {
			Run       runJSON     `json:"run"`
			Diagnosis string      `json:"diagnosis"`
			Advice    string      `json:"advice"`
			Events    []eventJSON `json:"events"`
			Skipped   int         `json:"skipped_lines"`
		}{runJSON{*r, d.short(r.ID)}, r.Reason, r.Advice, make([]eventJSON, 0, len(es)), d.Skipped}
		for i := range es {
			out.Events = append(out.Events, toEventJSON(&es[i], es[0].Time))
		}
		return l.writeJSON(out)
	}
	p := report.Painter(l.color)
	w := l.c.stdout
	fmt.Fprintf(w, "%s  %s · generation %d · pid %d · %s\n", p.Paint(report.StyleBold, termsafe.String(r.ID)), termsafe.String(r.Server), r.Generation, r.PID, termsafe.String(r.Shim))
	fmt.Fprintf(w, "started %s · lasted %s · %s", r.Start.In(l.loc).Format("2006-01-02 15:04:05.000 MST"),
		verdict.FormatMS(r.DurationMS), p.Paint(report.OutcomeStyle(&r.Verdict), r.Outcome))
	if r.Alive {
		fmt.Fprint(w, " (still running)")
	}
	fmt.Fprintln(w)
	for _, link := range []struct{ label, id string }{{"previous run", r.PreviousRun}, {"next run", r.NextRun}} {
		if link.id == "" {
			continue
		}
		if o, ok := d.find(link.id); ok {
			about := p.Paint(report.OutcomeStyle(&o.Verdict), o.Outcome)
			if o.Reason != "" {
				about += ", " + report.OneLine(o.Reason, 80)
			}
			fmt.Fprintf(w, "%s: %s (%s)\n", link.label, termsafe.String(d.short(link.id)), about)
		} else {
			fmt.Fprintf(w, "%s: %s (not in these files)\n", link.label, termsafe.String(link.id))
		}
	}
	room := 60 // of each field's value on a terminal; whole with --wide and in a pipe
	if l.width <= 0 {
		room = math.MaxInt
	}
	var phase phases.Phase
	for i := range es {
		e := &es[i]
		if e.Phase != phase || i == 0 {
			phase = e.Phase
			fmt.Fprintf(w, "\n%s\n", p.Paint(report.StyleBold, termsafe.String(string(phase))))
		}
		text := report.FieldsText(e, room, "stderr_tail", "latency_ms")
		if ms, ok := e.Float("latency_ms"); ok {
			text = strings.TrimSpace(text + " " + p.Paint(report.StyleBold, "latency "+verdict.FormatMS(ms)))
		}
		origin := ""
		if e.Origin != "" {
			origin = p.Paint(report.StyleDim, " ["+termsafe.String(e.Origin)+"]")
		}
		line := fmt.Sprintf("  %s  %s%s  %s", p.Paint(report.StyleDim, offset(e.Time.Sub(es[0].Time))), p.Paint(report.EventStyle(e), termsafe.String(e.Event)), origin, text)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if len(r.StderrTail) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Paint(report.StyleBold, "stderr tail"))
		for _, s := range r.StderrTail {
			fmt.Fprintf(w, "  | %s\n", termsafe.String(s))
		}
	}
	if d.Skipped > 0 {
		fmt.Fprintf(w, "\n%s skipped in the ledger files (torn or not ledger records)\n", verdict.Plural(d.Skipped, "line"))
	}
	fmt.Fprintf(w, "\n%s %s: %s\n", p.Paint(report.StyleBold, "diagnosis:"), p.Paint(report.OutcomeStyle(&r.Verdict), r.Outcome), termsafe.String(r.Reason))
	if r.Advice != "" {
		fmt.Fprintf(w, "%s %s\n", p.Paint(report.StyleBold, "what to do:"), termsafe.String(r.Advice))
	}
	return 0
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

// eventJSON is one record as --json prints it.
type eventJSON struct {
	Time     time.Time      `json:"ts"`
	OffsetMS float64        `json:"offset_ms"`
	Seq      uint64         `json:"seq"`
	Phase    phases.Phase   `json:"phase"`
	Event    string         `json:"event"`
	Origin   string         `json:"origin,omitempty"`
	Fields   map[string]any `json:"fields"`
}

func toEventJSON(e *ledger.Entry, start time.Time) eventJSON {
	f := e.Fields
	if f == nil {
		f = map[string]any{}
	}
	return eventJSON{e.Time, float64(e.Time.Sub(start).Microseconds()) / 1000, e.Seq, e.Phase, e.Event, e.Origin, f}
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
func (l *ledgerCmd) evidenceLine(e *ledger.Entry) string {
	fields := report.FieldsText(e, 40, "stderr_tail")
	if keys, ok := evidenceKeys[e.Event]; ok {
		var parts []string
		for _, k := range keys {
			if v, ok := e.Fields[k]; ok {
				parts = append(parts, k+"="+report.OneLine(report.ValueText(v), 40))
			}
		}
		fields = strings.Join(parts, " ")
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", e.Time.In(l.loc).Format("15:04:05.000"), termsafe.String(string(e.Phase)), termsafe.String(e.Event), fields))
}

// oneLine makes s one line of at most width runes.
// fit cuts s, printed after indent columns, to the terminal's width with
// "…"; whole in a pipe or with --wide, and never below 20 characters.
func (l *ledgerCmd) fit(s string, indent int) string {
	if l.width <= 0 {
		return s
	}
	return report.OneLine(s, max(l.width-indent, 20))
}
