package report

import (
	"io"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Styles are ANSI SGR sequences; Painter applies them only when colour is on.
const (
	StyleBold    = "\x1b[1m"
	StyleDim     = "\x1b[2m"
	StyleRed     = "\x1b[31m"
	StyleBoldRed = "\x1b[1;31m"
	StyleGreen   = "\x1b[32m"
	StyleYellow  = "\x1b[33m"
	StyleMagenta = "\x1b[35m"
	StyleCyan    = "\x1b[36m"
)

// Painter paints a text with a style when it is true (colour is on).
type Painter bool

// Paint is s in style, reset after it.
func (p Painter) Paint(style, s string) string {
	if !p || style == "" || s == "" {
		return s
	}
	return style + s + "\x1b[0m"
}

// OutcomeStyle colours a verdict's outcome word: a failure is never green.
func OutcomeStyle(v *verdict.Verdict) string {
	switch {
	case v.Outcome == verdict.Timeout:
		return StyleYellow
	case v.Outcome == verdict.Running:
		return StyleCyan
	case v.Fixable:
		return StyleBoldRed
	case v.Failed:
		return StyleRed
	}
	return StyleGreen
}

// StyleIf is style when cond holds.
func StyleIf(cond bool, style string) string {
	if cond {
		return style
	}
	return ""
}

// AnswerStyle colours one of the four answers: yes green, no red, else yellow.
func AnswerStyle(a string) string {
	switch a {
	case "yes":
		return StyleGreen
	case "no":
		return StyleRed
	}
	return StyleYellow
}

// EventStyle colours failures red and warnings yellow.
func EventStyle(e *ledger.Entry) string {
	switch e.Event {
	case phases.SpawnFailed, phases.InitializeFailed, phases.DiscoverFailed, phases.ToolsListFailed, phases.HandshakeTimeout,
		phases.PendingFailed, phases.RestartsExhausted, phases.ReplayFailed, phases.ForgedEvent, phases.RecordsLost, phases.ExternalDenied:
		return StyleRed
	case phases.StdoutNoise, phases.KillRequested, phases.RestartScheduled, phases.SignalReceived, phases.ClientNoise, phases.ToolsMissing:
		return StyleYellow
	case phases.Exited:
		if code, _ := e.Int("exit_code"); (code != 0 || e.Str("signal") != "") && !e.Bool("requested_by_shim") {
			return StyleRed
		}
	case phases.ToolCallResponded:
		if e.Str("outcome") != "success" {
			return StyleYellow
		}
	case phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed:
		return StyleGreen
	}
	return ""
}

// Table lines up cells in columns; styles are applied after padding so
// escape sequences never skew the widths. Given a width, it fits: it takes
// its Steps in order (shorten a column to each Cell's Short text, or
// drop it) until the rows fit, then cuts the last column with "…". With
// Below set, a last column that would be cut goes on a line of its own under
// each row instead (folded, at most two lines), and the other columns fit
// without it: at 80 columns a row keeps its start time and its WHY whole
// rather than losing the one and cutting the other to 30 characters.
//
// Its rows are the ones added, or else N made by Row: a million runs are not
// held as cells (three times the runs themselves) but made twice, for the
// widths and to print, on every CPU.
type Table struct {
	rows  [][]Cell
	N     int
	Row   func(i int, dst []Cell) []Cell // appends row i to dst; safe to call from several goroutines
	Steps []FitStep
	Below bool
}

// Cell is one cell of a Table.
type Cell struct {
	Text  string
	Style string
	Right bool
	Short string // the text once its column is shortened; "" keeps text
}

// FitStep shortens (Drop false) or drops column Col.
type FitStep struct {
	Col  int
	Drop bool
}

// Add appends a row.
func (t *Table) Add(cells ...Cell) { t.rows = append(t.rows, cells) }

func (t *Table) len() int {
	if t.Row != nil {
		return t.N
	}
	return len(t.rows)
}

// cells is row i in dst, its texts made safe to print (before the widths:
// escapes are wider).
func (t *Table) cells(i int, dst []Cell) []Cell {
	var row []Cell
	if t.Row != nil {
		row = t.Row(i, dst[:0])
	} else {
		row = append(dst[:0], t.rows[i]...)
	}
	for k := range row {
		row[k].Text, row[k].Short = termsafe.String(row[k].Text), termsafe.String(row[k].Short)
	}
	return row
}

// widths are a table's column widths, in full and shortened.
type widths struct{ full, short []int }

func (w *widths) add(row []Cell) {
	for i, c := range row {
		if i >= len(w.full) {
			w.full, w.short = append(w.full, 0), append(w.short, 0)
		}
		w.full[i] = max(w.full[i], utf8.RuneCountInString(c.Text))
		w.short[i] = max(w.short[i], utf8.RuneCountInString(c.shown(true)))
	}
}

// measure is the widths of all rows, a share of them on each CPU.
func (t *Table) measure() widths {
	n := t.len()
	parts := make([]widths, min(runtime.GOMAXPROCS(0), max(n/4096, 1)))
	var wg sync.WaitGroup
	for k := range parts {
		wg.Add(1)
		go func() { // exits when its share is measured
			defer wg.Done()
			var row []Cell
			for i := k * n / len(parts); i < (k+1)*n/len(parts); i++ {
				row = t.cells(i, row)
				parts[k].add(row)
			}
		}()
	}
	wg.Wait()
	w := parts[0]
	for _, p := range parts[1:] {
		for i := range p.full {
			if i >= len(w.full) {
				w.full, w.short = append(w.full, 0), append(w.short, 0)
			}
			w.full[i], w.short[i] = max(w.full[i], p.full[i]), max(w.short[i], p.short[i])
		}
	}
	return w
}

// Write prints the table; width 0 is unlimited.
func (t *Table) Write(w io.Writer, p Painter, width int) error {
	if t.len() == 0 {
		return nil
	}
	ws := t.measure()
	last := len(ws.full) - 1
	l := fit(ws, t.Steps, width, -1)
	if t.Below && width > 0 && l.cut > 0 {
		l = fit(ws, t.Steps, width, last)
	}
	rows := sync.Pool{New: func() any { return new([]Cell) }}
	return Ordered(w, t.len(), func(dst []byte, i int) ([]byte, error) {
		row := rows.Get().(*[]Cell)
		*row = t.cells(i, *row)
		dst = l.appendRow(dst, *row, p, width)
		rows.Put(row)
		return dst, nil
	})
}

// appendRow appends a row's line, and the lines of its last column when it
// goes under the row.
func (l *layout) appendRow(dst []byte, row []Cell, p Painter, width int) []byte {
	last := len(l.ws) - 1
	start := len(dst)
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
			text = OneLine(text, l.cut)
		}
		pad := max(l.ws[i]-utf8.RuneCountInString(text), 0)
		if i == end && !c.Right {
			pad = 0
		}
		if c.Right {
			dst = appendSpaces(dst, pad)
			dst = append(dst, p.Paint(c.Style, text)...)
		} else {
			dst = append(dst, p.Paint(c.Style, text)...)
			dst = appendSpaces(dst, pad)
		}
		if i < end && l.ws[i] > 0 {
			dst = append(dst, "  "...)
		}
	}
	for len(dst) > start && dst[len(dst)-1] == ' ' {
		dst = dst[:len(dst)-1]
	}
	dst = append(dst, '\n')
	if l.under && row[last].Text != "" {
		// Folded under the row, two lines at most.
		const indent = "    "
		folded := strings.Split(strings.TrimSuffix(cmdline.Fold(row[last].Text, width, indent), "\n"), "\n")
		if len(folded) > 2 {
			folded = []string{folded[0], indent + OneLine(strings.TrimPrefix(strings.Join(folded[1:], " "), indent), width-len(indent))}
		}
		for _, f := range folded {
			dst = append(dst, indent...)
			dst = append(dst, p.Paint(row[last].Style, strings.TrimPrefix(f, indent))...)
			dst = append(dst, '\n')
		}
	}
	return dst
}

func appendSpaces(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, ' ')
	}
	return dst
}

// layout is how a table fits: each column's width, which are shortened or
// dropped, the room of a cut last column, and whether it goes below.
type layout struct {
	ws             []int
	dropped, short []bool
	cut            int
	under          bool
}

// fit takes the steps until the columns fit width; under, when not -1, is
// the last column, set aside to go below the rows.
func fit(w widths, steps []FitStep, width, under int) layout {
	const lastRoom = 32 // what an inline last column keeps before the others give way
	l := layout{dropped: make([]bool, len(w.full)), short: make([]bool, len(w.full)), under: under >= 0}
	if l.under {
		l.dropped[under] = true
	}
	sizes := func() ([]int, int) {
		ws := make([]int, len(w.full))
		for i := range ws {
			switch {
			case l.dropped[i]:
			case l.short[i]:
				ws[i] = w.short[i]
			default:
				ws[i] = w.full[i]
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
	ws, total := sizes()
	for _, st := range steps {
		if width <= 0 || total <= width {
			break
		}
		if st.Drop {
			l.dropped[st.Col] = true
		} else {
			l.short[st.Col] = true
		}
		ws, total = sizes()
	}
	l.ws = ws
	if last := len(ws) - 1; last >= 0 && !l.under {
		if full := total - min(ws[last], lastRoom) + ws[last]; width > 0 && full > width {
			l.cut = max(ws[last]-(full-width), 12)
		}
	}
	return l
}

func (c Cell) shown(short bool) string {
	if short && c.Short != "" {
		return c.Short
	}
	return c.Text
}
