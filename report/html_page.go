package report

import (
	"bufio"
	"io"
	"strconv"
)

// writePage writes the report's page. It replaced html/template, whose
// reflection kept every exported method in the binary (2 MB of it); the page
// is byte for byte what that template wrote (report/testdata/html/page.tmpl,
// which the tests run against this) and escapes as it did: every value from
// the ledger goes through esc, in text, attribute and <title> alike.
func writePage(w io.Writer, v reportView) error {
	p := pageWriter{bufio.NewWriter(w)}
	p.raw(pageHead)
	p.raw(`<div class="meta">generated `)
	p.esc(v.Generated)
	p.raw(" · ")
	p.count(v.Runs)
	p.raw(" runs from ")
	p.count(v.Files)
	p.raw(" files")
	if v.Skipped != 0 {
		p.raw(" · ")
		p.count(v.Skipped)
		p.raw(" lines skipped (torn or not ledger records)")
	}
	p.raw(` · <span id="summary">`)
	p.count(len(v.Chains))
	p.raw(" chains, ")
	p.count(v.Failed)
	p.raw(" with a failure</span></div>\n")
	p.raw(pageControls)
	for i := range v.Chains {
		p.chain(&v.Chains[i])
	}
	p.raw(pageTail)
	return p.w.Flush()
}

// chain writes one card: its header, badges, notes and waterfall.
func (p pageWriter) chain(c *chainView) {
	p.raw("\n<section class=\"chain")
	p.flag(c.Failed, " failed")
	p.raw(`" data-server="`)
	p.esc(c.Server)
	p.raw("\">\n<header><h2>")
	p.esc(c.Server)
	p.raw("</h2>\n")
	for _, r := range c.Runs {
		p.raw(`<span class="badge`)
		p.flag(r.Failed, " failed")
		p.flag(r.Fixable, " fixable")
		p.raw(`" title="`)
		p.esc(r.Reason)
		p.raw(`">`)
		p.esc(r.Short)
		p.raw(" ")
		p.esc(r.Outcome)
		p.raw("</span>")
	}
	p.raw("\n<span class=\"detail\">")
	p.esc(c.Start)
	p.raw(" · ")
	p.esc(c.Duration)
	p.raw("</span></header>\n")
	for _, r := range c.Runs {
		if !r.Note {
			continue
		}
		p.raw(`<div class="detail`)
		p.flag(r.Failed, " why")
		p.raw(`">`)
		p.esc(r.Short)
		p.raw(" ")
		p.esc(r.Outcome)
		p.raw(": ")
		p.esc(r.Reason)
		if r.Advice != "" {
			p.raw(" — ")
			p.esc(r.Advice)
		}
		p.raw("</div>")
	}
	p.raw(`
<div class="wf"><svg width="1120" height="`)
	p.count(c.Height)
	p.raw(`" viewBox="0 0 1120 `)
	p.count(c.Height)
	p.raw(`" role="img">
<g class="axis">`)
	for _, t := range c.Ticks {
		p.raw(`<line x1="`)
		p.coord(t.X)
		p.raw(`" x2="`)
		p.coord(t.X)
		p.raw(`" y1="16" y2="`)
		p.count(c.Height)
		p.raw(`"></line><text x="`)
		p.coord(t.X)
		p.raw(`" y="12" text-anchor="middle">`)
		p.esc(t.Label)
		p.raw("</text>")
	}
	p.raw("</g>\n")
	for i := range c.Rows {
		p.row(&c.Rows[i])
	}
	p.raw("\n")
	for _, l := range c.Links {
		p.raw(`<path class="link" d="M`)
		for i, n := range [...]float64{l.X1, l.Y1, l.X1, l.Y2, l.X2, l.Y1, l.X2, l.Y2} {
			switch i {
			case 0:
			case 2:
				p.raw(" C")
			default:
				p.raw(" ")
			}
			p.coord(n)
		}
		p.raw(`"><title>`)
		p.esc(l.Title)
		p.raw("</title></path>")
	}
	p.raw("\n</svg></div>\n")
	if c.Dropped != 0 {
		p.raw(`<div class="dropped">`)
		p.count(c.Dropped)
		p.raw(" more rows not drawn</div>")
	}
	p.raw("\n</section>\n")
}

// row writes one line of the waterfall.
func (p pageWriter) row(r *svgRow) {
	p.raw(`<g class="row`)
	if r.Head {
		p.raw(" head ")
		p.esc(r.Class)
	}
	p.raw(`" transform="translate(0 `)
	p.count(r.Y)
	p.raw(")\">\n<text x=\"")
	if r.Head {
		p.raw("4")
	} else {
		p.raw("16")
	}
	p.raw(`" y="14">`)
	p.esc(r.Label)
	p.raw("</text>\n")
	for _, b := range r.Bars {
		p.raw(`<rect class="`)
		p.esc(b.Class)
		p.raw(`" x="`)
		p.coord(b.X)
		p.raw(`" y="3" width="`)
		p.coord(b.W)
		p.raw(`" height="14" rx="2"><title>`)
		p.esc(b.Title)
		p.raw("</title></rect>")
	}
	p.raw("\n")
	for _, m := range r.Marks {
		p.raw(`<text class="mark `)
		p.esc(m.Class)
		p.raw(`" x="`)
		p.coord(m.X)
		p.raw(`" y="10"><title>`)
		p.esc(m.Title)
		p.raw("</title>")
		p.esc(m.Glyph)
		p.raw("</text>")
	}
	p.raw("\n</g>")
}

// pageWriter writes the page; the first write error sticks in the
// bufio.Writer and Flush returns it.
type pageWriter struct{ w *bufio.Writer }

func (p pageWriter) raw(s string) { p.w.WriteString(s) }

func (p pageWriter) flag(on bool, s string) {
	if on {
		p.raw(s)
	}
}

func (p pageWriter) count(n int) { p.w.Write(strconv.AppendInt(p.w.AvailableBuffer(), int64(n), 10)) }

// coord writes a coordinate as the template's printf "%.1f" did, escaped as
// it was (+Inf would have a '+').
func (p pageWriter) coord(f float64) { p.esc(strconv.FormatFloat(f, 'f', 1, 64)) }

// esc writes s escaped as html/template escaped text, quoted attribute
// values and RCDATA (<title>) alike: NUL becomes U+FFFD and the five
// characters that can end or open markup, and '+', become references.
// Every other byte, invalid UTF-8 included, passes through.
func (p pageWriter) esc(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case 0:
			rep = "\uFFFD"
		case '"':
			rep = "&#34;"
		case '&':
			rep = "&amp;"
		case '\'':
			rep = "&#39;"
		case '+':
			rep = "&#43;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		p.w.WriteString(s[last:i])
		p.w.WriteString(rep)
		last = i + 1
	}
	p.w.WriteString(s[last:])
}

// pageHead is everything up to the summary line. The line holding a lone
// space is where the template's escaper elided a CSS comment, which said what
// the next rules do: a window narrower than the waterfall scrolls it inside
// its card; the page never overflows.
const pageHead = `<!DOCTYPE html>
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
` + " \n" + `.wf { overflow-x: auto; max-width: 100%; }
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
`

// pageControls is the filter and the legend.
const pageControls = `<div class="controls"><label><input type="checkbox" id="only-failed"> only chains with a failure</label>
<label>server <input type="search" id="server-filter" placeholder="filter"></label></div>
<div class="legend"><span><i style="background:var(--ok)"></i>ok</span><span><i style="background:var(--warn)"></i>isError / zero tools / timeout</span><span><i style="background:var(--bad)"></i>error</span><span><i style="background:var(--pending);opacity:.5"></i>no answer recorded</span><span><i style="background:var(--input)"></i>input required</span><span style="color:var(--bad)">✕ failure</span><span style="color:var(--warn)">▲ stdout noise</span><span style="color:var(--ext)">◆ external</span><span>■ exit</span><span style="color:var(--bad)">- - restart</span></div>
`

// pageTail is the script. The line holding two spaces is where the
// template's escaper elided a JS comment: pageOverflow is for the
// narrow-window test (does anything stick out of the page?).
const pageTail = `
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
` + "  \n" + `  body.dataset.pageOverflow = document.documentElement.scrollWidth > document.documentElement.clientWidth ? 'yes' : 'no';
  body.dataset.ready = 'yes';
})();
</script>
</body>
</html>
`
