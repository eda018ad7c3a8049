package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Print writes the scenario as text at most width columns wide: what the
// client saw, the ledger's events with their key fields (cut to the width:
// the ledger has the rest), and the outcome of each run.
func (r *Result) Print(w io.Writer, width int) {
	fmt.Fprintln(w)
	cmdline.Hang(w, width, "", r.Name+": "+r.About)
	for _, n := range r.Client {
		cmdline.Hang(w, width, "  client  ", n)
	}
	for _, e := range r.Events {
		line := fmt.Sprintf("  %-7s %-12s %-23s %s", at(e.AtMS), e.Phase, e.Event, fields(e))
		fmt.Fprintln(w, clip(strings.TrimRight(line, " "), width))
	}
	if r.Error != "" {
		cmdline.Hang(w, width, "  ERROR   ", r.Error)
		return
	}
	for i, run := range r.Runs {
		label := run.Outcome
		if len(r.Runs) > 1 {
			label = fmt.Sprintf("run %d %s", i+1, run.Outcome)
		}
		cmdline.Hang(w, width, "  => "+label+"  ", run.Why)
	}
	if r.Outcome != r.Expected {
		fmt.Fprintf(w, "  (the tour expected %s)\n", r.Expected)
	}
}

func at(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("+%.0fms", ms)
	}
	return fmt.Sprintf("+%.2fs", ms/1000)
}

// fields renders the key fields in their table order.
func fields(e Event) string {
	keys, ok := keyFieldsOf[e.Event]
	if !ok {
		keys = make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var parts []string
	for _, k := range keys {
		v, ok := e.Fields[k]
		if !ok {
			continue
		}
		switch k {
		case "argv":
			v = strings.Join(strs(v), " ")
		case "stderr_tail": // the last line says why; the ledger has the rest
			tail := strs(v)
			if len(tail) == 0 {
				continue
			}
			k, v = "stderr", tail[len(tail)-1]
		}
		if n, ok := v.(json.Number); ok && strings.HasSuffix(k, "_ms") {
			ms, _ := n.Float64()
			k, v = strings.TrimSuffix(k, "_ms"), verdict.FormatMS(ms)
		}
		parts = append(parts, k+"="+value(v))
	}
	return strings.Join(parts, " ")
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func value(v any) string {
	switch v := v.(type) {
	case string:
		v = clip(v, 60)
		switch {
		case strings.Contains(v, `"`) && strconv.CanBackquote(v): // JSON reads better unescaped
			return "`" + v + "`"
		case v == "" || strings.ContainsAny(v, " \"=`"):
			return strconv.Quote(v)
		}
		return v
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return strings.Join(strs(v), ",")
	}
	return fmt.Sprint(v)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
