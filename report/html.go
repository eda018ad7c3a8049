package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"sync"
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
	return view.Failed, reportTemplate().Execute(w, view)
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

// reportTemplate is parsed on first use: every shim links it, few print a report.
var reportTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mcpshim ledger report</title>
<style>
:root { --ok:#2e7d32; --bad:#c62828; --warn:#ef6c00; --pending:#9e9e9e; --input:#6a1b9a; --ext:#1565c0; --ink:#1c1c1c; --mute:#6b6b6b; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f6f6f4; margin: 0; padding: 20px 24px; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: var(--mute); margin-bottom: 12px; }
.controls { margin: 8px 0 14px; display: flex; gap: 16px; align-items: center; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; color: var(--mute); font-size: 12px; margin-bottom: 14px; }
.legend i { display: inline-block; width: 14px; height: 9px; margin-right: 5px; vertical-align: middle; border-radius: 2px; }
.chain { background: #fff; border: 1px solid #ddd; border-left: 5px solid var(--ok); border-radius: 6px; margin: 0 0 14px; padding: 10px 12px; }
.chain.failed { border-left-color: var(--bad); }
.chain header { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; margin-bottom: 6px; }
.chain h2 { font-size: 15px; margin: 0; }
.badge { font: 600 11px/1 ui-monospace, monospace; padding: 3px 6px; border-radius: 3px; background: #e8f5e9; color: var(--ok); }
.badge.failed { background: #ffebee; color: var(--bad); }
.badge.fixable { background: var(--bad); color: #fff; }
.detail { color: var(--mute); font-size: 12px; }
.detail.why { color: var(--bad); }
svg { display: block; }
/* A window narrower than the waterfall scrolls it inside its card; the page never overflows. */
.wf { overflow-x: auto; max-width: 100%; }
.wf svg { display: block; }
.chain { min-width: 0; overflow-wrap: anywhere; }
svg text { font: 11px ui-monospace, SFMono-Regular, Menlo, monospace; fill: var(--ink); }
svg .axis text { fill: var(--mute); }
svg .axis line { stroke: #e4e4e4; }
svg .head text { font-weight: 700; }
svg .head.bad text { fill: var(--bad); }
svg .life { fill: #eef1f5; }
svg .bar.ok { fill: var(--ok); }
svg .bar.failed { fill: var(--bad); }
svg .bar.warn { fill: var(--warn); }
svg .bar.timeout { fill: var(--warn); opacity: .75; }
svg .bar.pending { fill: var(--pending); opacity: .5; }
svg .bar.input { fill: var(--input); }
svg .mark { font-size: 12px; text-anchor: middle; dominant-baseline: central; }
svg .marker-failed text, svg text.marker-failed { fill: var(--bad); font-weight: 700; }
svg text.noise { fill: var(--warn); }
svg text.external { fill: var(--ext); }
svg text.exit { fill: var(--mute); }
svg text.alive { fill: var(--ext); }
svg .link { stroke: var(--bad); stroke-dasharray: 4 3; fill: none; }
.dropped { color: var(--mute); font-size: 12px; }
body.only-failed .chain:not(.failed) { display: none; }
</style>
</head>
<body>
<h1>mcpshim ledger report</h1>
<div class="meta">generated {{.Generated}} · {{.Runs}} runs from {{.Files}} files{{if .Skipped}} · {{.Skipped}} lines skipped (torn or not ledger records){{end}} · <span id="summary">{{len .Chains}} chains, {{.Failed}} with a failure</span></div>
<div class="controls"><label><input type="checkbox" id="only-failed"> only chains with a failure</label>
<label>server <input type="search" id="server-filter" placeholder="filter"></label></div>
<div class="legend"><span><i style="background:var(--ok)"></i>ok</span><span><i style="background:var(--warn)"></i>isError / zero tools / timeout</span><span><i style="background:var(--bad)"></i>error</span><span><i style="background:var(--pending);opacity:.5"></i>no answer recorded</span><span><i style="background:var(--input)"></i>input required</span><span style="color:var(--bad)">✕ failure</span><span style="color:var(--warn)">▲ stdout noise</span><span style="color:var(--ext)">◆ external</span><span>■ exit</span><span style="color:var(--bad)">- - restart</span></div>
{{range .Chains}}
<section class="chain{{if .Failed}} failed{{end}}" data-server="{{.Server}}">
<header><h2>{{.Server}}</h2>
{{range .Runs}}<span class="badge{{if .Failed}} failed{{end}}{{if .Fixable}} fixable{{end}}" title="{{.Reason}}">{{.Short}} {{.Outcome}}</span>{{end}}
<span class="detail">{{.Start}} · {{.Duration}}</span></header>
{{range .Runs}}{{if .Note}}<div class="detail{{if .Failed}} why{{end}}">{{.Short}} {{.Outcome}}: {{.Reason}}{{if .Advice}} — {{.Advice}}{{end}}</div>{{end}}{{end}}
<div class="wf"><svg width="1120" height="{{.Height}}" viewBox="0 0 1120 {{.Height}}" role="img">
{{$height := .Height}}<g class="axis">{{range .Ticks}}<line x1="{{printf "%.1f" .X}}" x2="{{printf "%.1f" .X}}" y1="16" y2="{{$height}}"></line><text x="{{printf "%.1f" .X}}" y="12" text-anchor="middle">{{.Label}}</text>{{end}}</g>
{{range .Rows}}<g class="row{{if .Head}} head {{.Class}}{{end}}" transform="translate(0 {{.Y}})">
<text x="{{if .Head}}4{{else}}16{{end}}" y="14">{{.Label}}</text>
{{range .Bars}}<rect class="{{.Class}}" x="{{printf "%.1f" .X}}" y="3" width="{{printf "%.1f" .W}}" height="14" rx="2"><title>{{.Title}}</title></rect>{{end}}
{{range .Marks}}<text class="mark {{.Class}}" x="{{printf "%.1f" .X}}" y="10"><title>{{.Title}}</title>{{.Glyph}}</text>{{end}}
</g>{{end}}
{{range .Links}}<path class="link" d="M{{printf "%.1f" .X1}} {{printf "%.1f" .Y1}} C{{printf "%.1f" .X1}} {{printf "%.1f" .Y2}} {{printf "%.1f" .X2}} {{printf "%.1f" .Y1}} {{printf "%.1f" .X2}} {{printf "%.1f" .Y2}}"><title>{{.Title}}</title></path>{{end}}
</svg></div>
{{if .Dropped}}<div class="dropped">{{.Dropped}} more rows not drawn</div>{{end}}
</section>
{{end}}
<script>
(function () {
  var body = document.body, chains = document.querySelectorAll('.chain');
  var failed = document.querySelectorAll('.chain.failed').length;
  var box = document.getElementById('only-failed'), filter = document.getElementById('server-filter');
  function apply() {
    body.classList.toggle('only-failed', box.checked);
    var q = filter.value.toLowerCase(), shown = 0;
    chains.forEach(function (c) {
      var hide = q && c.dataset.server.toLowerCase().indexOf(q) < 0;
      c.style.display = hide ? 'none' : '';
      if (!hide && (!box.checked || c.classList.contains('failed'))) shown++;
    });
    document.getElementById('summary').textContent = shown + ' of ' + chains.length + ' chains shown, ' + failed + ' with a failure';
  }
  box.addEventListener('change', apply);
  filter.addEventListener('input', apply);
  apply();
  body.dataset.bars = document.querySelectorAll('rect.bar').length;
  // For the narrow-window test: does anything stick out of the page?
  body.dataset.pageOverflow = document.documentElement.scrollWidth > document.documentElement.clientWidth ? 'yes' : 'no';
  body.dataset.ready = 'yes';
})();
</script>
</body>
</html>
`))
})
