package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// fixable sorts the outcomes a person can act on now before the rest.
func fixable(r *probe.Result) bool {
	return (r.Outcome != probe.Ready && !r.Outcome.Retryable()) || r.CanaryFailed()
}

// WriteProbe writes a probe of the fleet for a person; on a terminal (cols > 0)
// every line is folded at spaces to fit, under the column its text starts
// in, instead of wrapping mid-word.
func WriteProbe(w io.Writer, rep *probe.Report, verbose bool, cols int) {
	say := func(prefix, text string) { hang(w, cols, prefix, text) }
	say("read ", strings.Join(rep.Configs, ", "))
	for _, p := range rep.Problems {
		say(fmt.Sprintf("%-15s ", "CONFIG"), p.String())
	}
	for _, n := range rep.Notes {
		say(fmt.Sprintf("%-15s ", "note"), n)
	}
	width := 0
	for _, r := range rep.Results {
		width = max(width, len(r.Server))
	}
	sub := fmt.Sprintf("%-15s %-*s  ", "", width, "")
	line := func(r *probe.Result) {
		detail := r.Detail // the verdict's reason: the cause, the exit, how far a timeout got
		if r.Cached {
			detail += fmt.Sprintf(" [cached %s ago; --fresh to re-probe]", time.Since(r.Started).Round(time.Second))
		}
		say(fmt.Sprintf("%-15s %-*s %6.3fs  ", r.Outcome, width, r.Server, r.Elapsed.Seconds()), detail)
		for _, cn := range r.Canaries {
			if cn.OK { // a failed one is in the verdict's reason, as in the ledger
				say(sub, "canary ok: "+cn.Detail)
			}
		}
		for _, warn := range r.Warnings {
			say(sub, "warning: "+warn)
		}
		if verbose && r.Advice != "" {
			say(sub, "what to do: "+r.Advice)
		}
		if verbose {
			if r.Outcome == probe.Ready && len(r.Tools) > 0 {
				say(sub, "tools: "+strings.Join(r.ToolNames(), ", "))
			}
			if r.LastEvent != "" {
				stderr := "stderr silent"
				if r.StderrActive {
					stderr = "stderr active" // a cold npx install is slow, not dead
				}
				say(sub, fmt.Sprintf("last event: %s, %s, %s", r.LastEvent, verdict.Plural(r.Attempts, "attempt"), stderr))
			}
			if n := len(r.StderrTail); r.Outcome != probe.Ready && n > 0 && !strings.Contains(r.Detail, r.StderrTail[n-1]) {
				say(sub, "stderr: "+r.StderrTail[n-1])
			}
		}
	}
	counts := map[probe.Outcome]int{}
	for i := range rep.Results {
		r := &rep.Results[i]
		counts[r.Outcome]++
		if fixable(r) {
			line(r)
		}
	}
	// Then the ones only time may fix, each named, then the READY ones.
	for _, retryable := range []bool{true, false} {
		for i := range rep.Results {
			if r := &rep.Results[i]; !fixable(r) && r.Outcome.Retryable() == retryable {
				line(r)
			}
		}
	}
	if l := rep.Lock; l != nil {
		printLockCheck(w, l, cols)
	}
	if s := rep.SinceLast; s != nil && len(s.Lost) > 0 {
		say("", fmt.Sprintf("since the last probe: %d READY before, %s no longer: %s", len(s.Previous), verdict.Plural(len(s.Lost), "server"), strings.Join(s.Lost, ", ")))
	}
	say("", probeSummary(rep, counts))
}

// probeSummary is the last line: the counts, then everything Report.Status
// counted against the fleet, then the exit status, so the line and $? agree.
func probeSummary(rep *probe.Report, counts map[probe.Outcome]int) string {
	var parts []string
	for _, o := range []probe.Outcome{probe.Ready, probe.Timeout, probe.Exited, probe.Crashed, probe.ProtocolError, probe.Unreachable, probe.AuthRequired} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	if len(rep.Problems) > 0 {
		parts = append(parts, verdict.Plural(len(rep.Problems), "config problem"))
	}
	canaries := 0
	for i := range rep.Results {
		if rep.Results[i].CanaryFailed() {
			canaries++
		}
	}
	if canaries > 0 {
		parts = append(parts, fmt.Sprintf("%d with a failed canary", canaries))
	}
	if l := rep.Lock; l != nil {
		parts = append(parts, "lock "+l.State)
	}
	if s := rep.SinceLast; s != nil && len(s.Lost) > 0 {
		parts = append(parts, fmt.Sprintf("%d no longer READY", len(s.Lost)))
	}
	status := "exit 0"
	switch rep.Exit {
	case lock.ExitConfig:
		status = "exit 78: fix the above"
	case probe.ExitTempFail:
		status = "exit 75: only time may fix it, try again"
	}
	return fmt.Sprintf("%s in %.2fs: %s; %s", verdict.Plural(len(rep.Results), "server"), rep.ElapsedMS/1000, strings.Join(parts, ", "), status)
}

func printLockCheck(w io.Writer, l *probe.LockCheck, cols int) {
	say := func(prefix, text string) { hang(w, cols, prefix, text) }
	if l.Error != "" {
		say("", fmt.Sprintf("lock %s: FAILED, cannot be read: %s", l.File, l.Error))
		return
	}
	say("", fmt.Sprintf("lock %s: %s", l.File, l.State)) // the summary's word too
	for _, d := range l.Drifts {
		if d.Unverified != "" {
			say("  ", fmt.Sprintf("%s: %d locked tools unverified: %s", d.Server, d.Locked, d.Unverified))
		}
		if len(d.Missing) > 0 {
			say("  ", fmt.Sprintf("%s: %d/%d tools missing -> %s", d.Server, len(d.Missing), d.Locked, strings.Join(d.Missing, ", ")))
		}
		for _, rn := range d.Renamed {
			say("  ", fmt.Sprintf("%s: probable rename %s -> %s (same description and schema)", d.Server, rn.From, rn.To))
		}
		if len(d.Changed) > 0 {
			effect := "passes without --strict"
			if l.Strict {
				effect = "fails with --strict"
			}
			say("  ", fmt.Sprintf("%s: changed -> %s (%s)", d.Server, strings.Join(d.Changed, ", "), effect))
		}
		if len(d.Extra) > 0 {
			say("  ", fmt.Sprintf("%s: not locked, passes -> %s", d.Server, strings.Join(d.Extra, ", ")))
		}
	}
}

// hang is cmdline.Hang of text made safe for the terminal first (a tab shown
// as \t), so that the folding counts the columns it takes; in a pipe (cols
// 0) the line is whole and termsafe.Writer keeps its tabs.
func hang(w io.Writer, cols int, prefix, text string) {
	if cols > 0 {
		text = termsafe.String(text)
	}
	cmdline.Hang(w, cols, prefix, text)
}
