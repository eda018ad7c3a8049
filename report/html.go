package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Chains groups the picked runs with the runs they restarted from and
// into, oldest chain first.
func Chains(all []Run, picked []*Run) [][]*Run {
	byID := IndexRuns(all)
	seen := map[string]bool{}
	var chains [][]*Run
	for _, r := range picked {
		first := r
		for hops := 0; first.PreviousRun != "" && hops < len(all); hops++ {
			prev, ok := byID[first.PreviousRun]
			if !ok {
				break
			}
			first = prev
		}
		if seen[first.ID] {
			continue
		}
		var ch []*Run
		for cur := first; cur != nil && !seen[cur.ID]; cur = byID[cur.NextRun] {
			seen[cur.ID] = true
			ch = append(ch, cur)
		}
		chains = append(chains, ch)
	}
	sort.SliceStable(chains, func(i, j int) bool { return chains[i][0].Start.Before(chains[j][0].Start) })
	return chains
}

// RowsPerRun bounds the rows of one run on the page (the rest are counted),
// so that it stays small enough for a browser however large the ledger is.
const RowsPerRun = 300

// Page is what the HTML report says about where its runs came from.
type Page struct {
	Generated string // when, in the reader's zone
	Files     int    // ledger files read
	Skipped   int    // lines that were not records
}

// HTML writes one self-contained HTML page (inline CSS, SVG and JS, no
// network) with a waterfall per chain: launch, handshake, discovery and each
// call as bars on a time axis, failures and noise marked, restarts joined.
// short names each run as the reader's tables do; it returns how many chains
// failed.
func HTML(w io.Writer, page Page, chains [][]*Run, entries map[string][]ledger.Entry, short func(id string) string, loc *time.Location) (failed int, err error) {
	view := reportView{Generated: page.Generated, Files: page.Files, Skipped: page.Skipped}
	for _, ch := range chains {
		view.Runs += len(ch)
		cv := layoutChain(ch, entries, short, loc)
		if cv.Failed {
			view.Failed++
		}
		view.Chains = append(view.Chains, cv)
	}
	return view.Failed, writePage(w, view)
}

// The waterfall's geometry, in SVG pixels.
const (
	svgWidth  = 1120
	svgChartX = 300 // labels to the left
	svgChartW = svgWidth - svgChartX - 20
	svgLabel  = 42 // runes of a label that fit left of the chart
	svgRowH   = 20
	svgAxisH  = 24
	markGap   = 8 // a failure mark sits just after its bar's end, not on it
)

type reportView struct {
	Generated string
	Files     int
	Skipped   int
	Runs      int
	Failed    int
	Chains    []chainView
}

// chainView is one card: a run and its restarts on one time axis.
type chainView struct {
	Server   string
	Start    string
	Duration string
	Failed   bool // a run in it failed
	Runs     []runBadge
	Height   int
	Ticks    []svgTick
	Rows     []svgRow
	Links    []svgLink
	Dropped  int // rows not drawn
}

// runBadge is a run's verdict as the page shows it.
type runBadge struct {
	Short, Outcome, Reason, Advice string
	Fixable, Failed, Note          bool // Note: the reason is worth a line under the header
}

type svgTick struct {
	X     float64
	Label string
}

// svgRow is one line of the waterfall: a run's band, or one span of it.
type svgRow struct {
	Y     int
	Label string
	Head  bool // the run's band
	Class string
	Bars  []svgBar
	Marks []svgMark
}

type svgBar struct {
	X, W         float64
	Class, Title string
}

type svgMark struct {
	X                   float64
	Class, Glyph, Title string
}

type svgLink struct {
	X1, Y1, X2, Y2 float64
	Title          string
}

// chainView lays one chain out: rows top to bottom, time left to right.
func layoutChain(ch []*Run, entries map[string][]ledger.Entry, short func(id string) string, loc *time.Location) chainView {
	start, end := ch[0].Start, ch[0].End
	for _, r := range ch {
		if es := entries[r.ID]; len(es) > 0 && es[0].Time.Before(start) {
			start = es[0].Time
		}
		if r.End.After(end) {
			end = r.End
		}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	x := func(t time.Time) float64 {
		return svgChartX + float64(svgChartW)*float64(t.Sub(start))/float64(span)
	}
	cv := chainView{
		Server:   ch[0].Server,
		Start:    start.In(loc).Format("2006-01-02 15:04:05.000"),
		Duration: verdict.FormatMS(float64(span.Microseconds()) / 1000),
	}
	for _, step := range ticks(span) {
		cv.Ticks = append(cv.Ticks, svgTick{X: x(start.Add(step)), Label: "+" + verdict.FormatMS(float64(step.Microseconds())/1000)})
	}
	y := svgAxisH
	var prevExit *svgMark
	var prevY int
	for _, r := range ch {
		cv.Runs = append(cv.Runs, runBadge{short(r.ID), r.Outcome, r.Reason, r.Advice, r.Fixable, r.Failed, r.Failed || r.Advice != ""})
		if r.Failed {
			cv.Failed = true
		}
		rows, dropped := runRows(r, entries[r.ID], x)
		cv.Dropped += dropped
		head := svgRow{Y: y, Head: true, Class: "run " + outcomeClass(r),
			Label: OneLine(fmt.Sprintf("%s · gen %d · %s", short(r.ID), r.Generation, r.Outcome), svgLabel)}
		endMark := svgMark{X: x(r.End), Class: "exit", Glyph: "■", Title: "ended: " + ExitText(r)}
		switch {
		case r.Alive:
			endMark = svgMark{X: x(r.End), Class: "alive", Glyph: "▶", Title: "still running"}
		case r.Failed:
			endMark = svgMark{X: x(r.End), Class: "marker-failed", Glyph: "✕", Title: r.Outcome + ": " + r.Reason}
		}
		head.Bars = []svgBar{{X: x(r.Start), W: math.Max(1, x(r.End)-x(r.Start)), Class: "life", Title: "run " + r.ID}}
		head.Marks = []svgMark{endMark}
		if prevExit != nil {
			cv.Links = append(cv.Links, svgLink{X1: prevExit.X, Y1: float64(prevY + svgRowH/2), X2: x(r.Start), Y2: float64(y + svgRowH/2),
				Title: "restarted as run " + short(r.ID)})
		}
		prevExit, prevY = &endMark, y
		cv.Rows = append(cv.Rows, head)
		y += svgRowH
		for _, row := range rows {
			row.Y, row.Label = y, OneLine(row.Label, svgLabel-2)
			cv.Rows = append(cv.Rows, row)
			y += svgRowH
		}
	}
	cv.Height = y + 6
	return cv
}

// runRows turns a run's records into waterfall rows: launch, handshake,
// each tools/list and call and other request, noise and external traffic.
func runRows(r *Run, es []ledger.Entry, x func(time.Time) float64) (rows []svgRow, dropped int) {
	bar := func(from, to time.Time, class, title string) svgBar {
		return svgBar{X: x(from), W: math.Max(2, x(to)-x(from)), Class: "bar " + class, Title: title}
	}
	end := r.End
	var launchAt, spawnedAt, hsStart *ledger.Entry
	type open struct {
		e   *ledger.Entry
		row int
	}
	pending := map[string]open{} // request id -> its row
	var noise, external svgRow
	noise.Label, external.Label = "stdout noise", "external"
	handshakeRow := -1
	add := func(row svgRow) int {
		if len(rows) >= RowsPerRun {
			dropped++
			return -1
		}
		rows = append(rows, row)
		return len(rows) - 1
	}
	for i := range es {
		e := &es[i]
		id := e.Str(phases.FieldRequestID)
		switch e.Event {
		case phases.SpawnRequested:
			launchAt = e
		case phases.Spawned:
			spawnedAt = e
			from := e
			if launchAt != nil {
				from = launchAt
			}
			add(svgRow{Label: "launch", Bars: []svgBar{bar(from.Time, e.Time, "ok", "spawned pid "+fmt.Sprint(r.PID))}})
		case phases.SpawnFailed:
			from := e
			if launchAt != nil {
				from = launchAt
			}
			add(svgRow{Label: "launch", Bars: []svgBar{bar(from.Time, e.Time, "failed", e.Str(phases.FieldError))},
				Marks: []svgMark{{X: x(e.Time) + markGap, Class: "marker-failed", Glyph: "✕", Title: e.Str(phases.FieldErrorClass) + ": " + e.Str(phases.FieldError)}}})
		case phases.InitializeReceived, phases.DiscoverReceived:
			if hsStart == nil {
				hsStart = e
				handshakeRow = add(svgRow{Label: "handshake", Bars: []svgBar{bar(e.Time, end, "pending", "no answer recorded")}})
			}
		case phases.InitializeResponded, phases.DiscoverResponded, phases.HandshakeReplayed, phases.InitializeFailed,
			phases.DiscoverFailed, phases.HandshakeTimeout, phases.ModernRequest:
			class, title := "ok", e.Event+" "+latencyText(e)
			switch e.Event {
			case phases.InitializeFailed, phases.DiscoverFailed:
				class, title = "failed", fmt.Sprintf("%s: %s", e.Event, e.Str(phases.FieldMessage))
			case phases.HandshakeTimeout:
				class, title = "timeout", "handshake_timeout: "+e.Str(phases.FieldLastEvent)
			}
			from := e.Time
			switch {
			case hsStart != nil:
				from = hsStart.Time
			case spawnedAt != nil:
				from = spawnedAt.Time
			}
			b := bar(from, e.Time, class, title)
			if handshakeRow < 0 {
				handshakeRow = add(svgRow{Label: "handshake", Bars: []svgBar{b}})
				if handshakeRow < 0 {
					continue
				}
			} else if cur := rows[handshakeRow].Bars[0].Class; cur != "bar ok" && (cur == "bar pending" || class == "ok") {
				rows[handshakeRow].Bars[0] = b // the first answer, or the fallback that succeeded
			}
			if class == "failed" {
				rows[handshakeRow].Marks = append(rows[handshakeRow].Marks, svgMark{X: x(e.Time) + markGap, Class: "marker-failed", Glyph: "✕", Title: title})
			}
		case phases.ToolsListReceived, phases.ToolCallReceived, phases.RequestReceived:
			label := mcp.MethodListTools
			switch e.Event {
			case phases.ToolCallReceived:
				label = "call " + e.Str(phases.FieldTool)
			case phases.RequestReceived:
				label = e.Str(phases.FieldMethod)
			}
			if n := add(svgRow{Label: label + " #" + id, Bars: []svgBar{bar(e.Time, end, "pending", "no answer recorded")}}); n >= 0 {
				pending[id] = open{e, n}
			}
		case phases.ToolsListResponded, phases.ToolsListFailed, phases.ToolCallResponded, phases.RequestResponded, phases.PendingFailed:
			o, ok := pending[id]
			if !ok {
				continue
			}
			delete(pending, id)
			class, title := callClass(e), e.Event+" "+latencyText(e)
			switch e.Event {
			case phases.ToolsListResponded:
				if n, ok := e.Int(phases.FieldToolCount); ok {
					title = fmt.Sprintf("%d tools, %s", n, latencyText(e))
					if n == 0 {
						class = "warn"
					}
				}
			case phases.PendingFailed:
				title = e.Str(phases.FieldMessage)
				rows[o.row].Marks = append(rows[o.row].Marks, svgMark{X: x(e.Time) + markGap, Class: "marker-failed", Glyph: "✕", Title: title})
			}
			rows[o.row].Bars[0] = bar(o.e.Time, e.Time, class, title)
		case phases.StdoutNoise, phases.ClientNoise:
			noise.Marks = append(noise.Marks, svgMark{X: x(e.Time), Class: "noise", Glyph: "▲", Title: e.Event + ": " + e.Str(phases.FieldPreview)})
		case phases.ExternalAttempt, phases.ExternalResult, phases.ExternalDenied:
			class := "external"
			if e.Event == phases.ExternalDenied {
				class = "marker-failed"
			}
			external.Marks = append(external.Marks, svgMark{X: x(e.Time), Class: class, Glyph: "◆", Title: e.Event + " " + FieldsText(e, 40)})
		}
	}
	for _, extra := range []svgRow{noise, external} {
		if len(extra.Marks) > 0 {
			add(extra)
		}
	}
	return rows, dropped
}

func latencyText(e *ledger.Entry) string {
	if ms, ok := e.Float(phases.FieldLatencyMS); ok {
		return verdict.FormatMS(ms)
	}
	return ""
}

func callClass(e *ledger.Entry) string {
	switch e.Event {
	case phases.ToolsListFailed, phases.PendingFailed:
		return "failed"
	}
	switch e.Str(phases.FieldOutcome) {
	case "is_error":
		return "warn"
	case "rpc_error":
		return "failed"
	case "input_required":
		return "input"
	}
	return "ok"
}

func outcomeClass(r *Run) string {
	switch {
	case r.Outcome == verdict.Running:
		return "running"
	case r.Outcome == verdict.Timeout:
		return "timeout"
	case r.Failed:
		return "bad"
	}
	return "good"
}

// ticks are about six round steps (1, 2 or 5 times a power of ten) over span.
func ticks(span time.Duration) []time.Duration {
	raw := float64(span) / 6
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{2, 5, 10} {
		if step >= raw {
			break
		}
		step = pow * m
	}
	var out []time.Duration
	for t := 0.0; t <= float64(span); t += step {
		out = append(out, time.Duration(t))
	}
	return out
}
