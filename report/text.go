package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// ExitText says in a word how the run's process ended, or that it has not:
// the EXIT column of the ledger's tables.
func ExitText(r *Run) string {
	switch {
	case r.Alive:
		return "running"
	case r.Remote && r.SpawnFailed:
		return "no connection"
	case r.Remote && r.Exited:
		return "disconnected" // its exit_code is the bridge's, not a server's
	case r.SpawnFailed:
		return "not started"
	case r.Signal != "":
		return r.Signal
	case r.ExitCode != nil:
		return "exit " + strconv.Itoa(*r.ExitCode)
	case !r.Exited:
		return "unrecorded"
	}
	return "-"
}

// IndexRuns maps run ids to their runs.
func IndexRuns(runs []Run) map[string]*Run {
	m := make(map[string]*Run, len(runs))
	for i := range runs {
		m[runs[i].ID] = &runs[i]
	}
	return m
}

// FieldsText prints an event's fields as key=value in name order, each value
// cut to width, without the keys in skip.
func FieldsText(e *ledger.Entry, width int, skip ...string) string {
	var b strings.Builder
	for _, k := range e.FieldKeys() {
		if slices.Contains(skip, k) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(termsafe.String(k))
		b.WriteByte('=')
		b.WriteString(OneLine(ValueText(e.Fields[k]), width))
	}
	return b.String()
}

// ValueText prints a field value as the tables show it: quoted when it needs
// to be, JSON for lists and objects.
func ValueText(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" || strings.ContainsAny(v, " \"=\t\n") {
			return strconv.Quote(v)
		}
		return termsafe.String(v)
	case json.Number:
		return v.String()
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// OneLine is s on one line, safe for a terminal, cut to width runes.
func OneLine(s string, width int) string {
	s = termsafe.String(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}
