package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Styles are ANSI SGR sequences; painter applies them only when colour is on.
const (
	styleBold    = "\x1b[1m"
	styleDim     = "\x1b[2m"
	styleRed     = "\x1b[31m"
	styleBoldRed = "\x1b[1;31m"
	styleGreen   = "\x1b[32m"
	styleYellow  = "\x1b[33m"
	styleMagenta = "\x1b[35m"
	styleCyan    = "\x1b[36m"
)

type painter bool

func (p painter) paint(style, s string) string {
	if !p || style == "" || s == "" {
		return s
	}
	return style + s + "\x1b[0m"
}

// outcomeStyle makes the fixable failures stand out.
// outcomeStyle colours a verdict's outcome word: a failure is never green.
func outcomeStyle(v *verdict.Verdict) string {
	switch {
	case v.Outcome == verdict.Timeout:
		return styleYellow
	case v.Outcome == verdict.Running:
		return styleCyan
	case v.Fixable:
		return styleBoldRed
	case v.Failed:
		return styleRed
	}
	return styleGreen
}

func answerStyle(a string) string {
	switch a {
	case "yes":
		return styleGreen
	case "no":
		return styleRed
	}
	return styleYellow
}

// eventStyle colours failures red and warnings yellow.
func eventStyle(e *ledger.Entry) string {
	switch e.Event {
	case phases.SpawnFailed, phases.InitializeFailed, phases.DiscoverFailed, phases.ToolsListFailed, phases.HandshakeTimeout,
		phases.PendingFailed, phases.RestartsExhausted, phases.ReplayFailed, phases.ForgedEvent, phases.RecordsLost, phases.ExternalDenied:
		return styleRed
	case phases.StdoutNoise, phases.KillRequested, phases.RestartScheduled, phases.SignalReceived, phases.ClientNoise, phases.ToolsMissing:
		return styleYellow
	case phases.Exited:
		if code, _ := e.Int("exit_code"); (code != 0 || e.Str("signal") != "") && !e.Bool("requested_by_shim") {
			return styleRed
		}
	case phases.ToolCallResponded:
		if e.Str("outcome") != "success" {
			return styleYellow
		}
	case phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed:
		return styleGreen
	}
	return ""
}

// table lines up cells in columns; styles are applied after padding so
// escape sequences never skew the widths. Given a width, it fits: it takes
// its fit steps in order (shorten a column to each cell's short text, or
// drop it) until the rows fit, then cuts the last column with "…". With
// below set, a last column that would be cut goes on a line of its own under
// each row instead (folded, at most two lines), and the other columns fit
// without it: at 80 columns a row keeps its start time and its WHY whole
// rather than losing the one and cutting the other to 30 characters.
type table struct {
	rows  [][]cell
	steps []fitStep
	below bool
}

type cell struct {
	text  string
	style string
	right bool
	short string // the text once its column is shortened; "" keeps text
}

// fitStep shortens (drop false) or drops column col.
type fitStep struct {
	col  int
	drop bool
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// write prints the table; width 0 is unlimited.
func (t *table) write(w io.Writer, p painter, width int) {
	for _, row := range t.rows {
		for i := range row { // before the widths: escapes are wider
			row[i].text, row[i].short = termsafe.String(row[i].text), termsafe.String(row[i].short)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	last := len(t.rows[0]) - 1
	l := t.fit(width, -1)
	if t.below && width > 0 && l.cut > 0 {
		l = t.fit(width, last)
	}
	var b strings.Builder
	for _, row := range t.rows {
		b.Reset()
		end := len(row) - 1
		if l.under {
			end--
		}
		for i, c := range row[:end+1] {
			if l.dropped[i] {
				continue
			}
			text := c.shown(l.short[i])
			if i == last && l.cut > 0 {
				text = report.OneLine(text, l.cut)
			}
			pad := strings.Repeat(" ", max(l.ws[i]-utf8.RuneCountInString(text), 0))
			if i == end && !c.right {
				pad = ""
			}
			if c.right {
				b.WriteString(pad + p.paint(c.style, text))
			} else {
				b.WriteString(p.paint(c.style, text) + pad)
			}
			if i < end && l.ws[i] > 0 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if l.under && row[last].text != "" {
			// Folded under the row, two lines at most.
			const indent = "    "
			folded := strings.Split(strings.TrimSuffix(cmdline.Fold(row[last].text, width, indent), "\n"), "\n")
			if len(folded) > 2 {
				folded = []string{folded[0], indent + report.OneLine(strings.TrimPrefix(strings.Join(folded[1:], " "), indent), width-len(indent))}
			}
			for _, f := range folded {
				fmt.Fprintln(w, indent+p.paint(row[last].style, strings.TrimPrefix(f, indent)))
			}
		}
	}
}

// layout is how a table fits: each column's width, which are shortened or
// dropped, the room of a cut last column, and whether it goes below.
type layout struct {
	ws             []int
	dropped, short map[int]bool
	cut            int
	under          bool
}

// fit takes the steps until the columns fit width; under, when not -1, is
// the last column, set aside to go below the rows.
func (t *table) fit(width, under int) layout {
	const lastRoom = 32 // what an inline last column keeps before the others give way
	l := layout{dropped: map[int]bool{}, short: map[int]bool{}, under: under >= 0}
	if l.under {
		l.dropped[under] = true
	}
	widths := func() ([]int, int) {
		var ws []int
		for _, row := range t.rows {
			for i, c := range row {
				if i >= len(ws) {
					ws = append(ws, 0)
				}
				if !l.dropped[i] {
					ws[i] = max(ws[i], utf8.RuneCountInString(c.shown(l.short[i])))
				}
			}
		}
		total := 0
		for i, n := range ws {
			if i == len(ws)-1 && !l.under {
				n = min(n, lastRoom) // the last column is cut before the others give way
			}
			if n > 0 && !l.dropped[i] {
				total += n + 2
			}
		}
		return ws, total - 2
	}
	ws, total := widths()
	for _, st := range t.steps {
		if width <= 0 || total <= width {
			break
		}
		if st.drop {
			l.dropped[st.col] = true
		} else {
			l.short[st.col] = true
		}
		ws, total = widths()
	}
	l.ws = ws
	if last := len(ws) - 1; last >= 0 && !l.under {
		if full := total - min(ws[last], lastRoom) + ws[last]; width > 0 && full > width {
			l.cut = max(ws[last]-(full-width), 12)
		}
	}
	return l
}

func (c cell) shown(short bool) string {
	if short && c.short != "" {
		return c.short
	}
	return c.text
}
