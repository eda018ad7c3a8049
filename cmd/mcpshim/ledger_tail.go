package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// tailPoll is how often tail -f looks for new records: files are polled, the
// same way on every platform, and a ledger is small appends.
const tailPoll = 200 * time.Millisecond

// tail prints the latest records across all ledger files, oldest first, and
// with -f each new record as it is written (rotated and new files included)
// until ctx ends.
func (l *ledgerCmd) tail(ctx context.Context, args []string) int {
	var follow bool
	var n int
	pos, err := l.flags("tail", args, filterServer, func(fs *flag.FlagSet) {
		fs.BoolVar(&follow, "f", false, "keep printing new records as they are written")
		intFlag(fs, &n, "n", 20, 0, 1_000_000, "print the last `N` records first")
	})
	if err != nil {
		return usageStatus(err)
	}
	if follow && slices.Contains(pos, "-") {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger tail: -f follows files; - (stdin) is read once: drop -f, or give the ledger's path")
		return exitUsage
	}
	files, err := l.files(pos)
	if err != nil {
		return l.fail(err)
	}
	last, fol, errs := ledger.Last(files, n)
	for _, err := range errs {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
	}
	last = l.only(last)
	last = last[max(0, len(last)-n):]
	for i := range last {
		l.printRecord(&last[i])
	}
	if !follow {
		return 0
	}
	t := time.NewTicker(tailPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
		files, _, err := ledger.FilesOrDefault(pos, l.c.getenv) // no note: tail -f may start before the first shim
		if err != nil {
			continue
		}
		fresh := l.only(fol.Poll(files))
		for i := range fresh {
			l.printRecord(&fresh[i])
		}
	}
}

// only keeps the records of --server.
func (l *ledgerCmd) only(recs []ledger.Tailed) []ledger.Tailed {
	if l.servers == nil {
		return recs
	}
	out := recs[:0]
	for _, r := range recs {
		if l.server(r.Entry.Server) {
			out = append(out, r)
		}
	}
	return out
}

// printRecord prints one record: as its ledger line with --json, else as
// 15:04:05.000 server …run phase event key=value…
func (l *ledgerCmd) printRecord(r *ledger.Tailed) {
	if l.json {
		l.c.stdout.Write(append(bytes.TrimRight(r.Line, "\r\n"), '\n'))
		return
	}
	p := report.Painter(l.color)
	e := &r.Entry
	run := e.Run
	if len(run) > 10 {
		run = "…" + run[len(run)-6:]
	}
	origin := ""
	if e.Origin != "" {
		origin = p.Paint(report.StyleDim, " ["+termsafe.String(e.Origin)+"]")
	}
	fields := report.FieldsText(e, 80)
	if l.width > 0 { // the fields give way to the terminal's width
		plain := len("15:04:05.000") + utf8.RuneCountInString(fmt.Sprintf(" %s %s %s %s", e.Server, run, e.Phase, e.Event)) + 1
		if e.Origin != "" {
			plain += len(e.Origin) + 3
		}
		fields = report.OneLine(fields, max(l.width-plain, 12))
	}
	line := fmt.Sprintf("%s %s %s %s %s%s %s", p.Paint(report.StyleDim, e.Time.In(l.loc).Format("15:04:05.000")),
		p.Paint(report.StyleBold, termsafe.String(e.Server)), termsafe.String(run), termsafe.String(string(e.Phase)), p.Paint(report.EventStyle(e), termsafe.String(e.Event)), origin, fields)
	fmt.Fprintln(l.c.stdout, strings.TrimRight(line, " "))
}
