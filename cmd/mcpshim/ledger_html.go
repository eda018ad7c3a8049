package main

import (
	"bytes"
	"flag"
	"fmt"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/safefile"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Report limits: the page stays small enough for a browser however large the
// ledger is.
const (
	reportRuns   = 50   // newest matching runs drawn, with their restart chains
	reportEvents = 5000 // records kept per drawn run
)

// report writes report.HTML's page for the newest matching runs and their
// restart chains to a file.
func (l *ledgerCmd) report(args []string) int {
	var out string
	var limit int
	paths, err := l.flags("report", args, allFilters, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "html", "", "write the report to `FILE` (- for stdout)")
		fs.IntVar(&limit, "limit", reportRuns, "draw the newest `N` matching runs (and the runs they restarted from or into)")
	})
	if err != nil {
		return usageStatus(err)
	}
	if out == "" {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger report: --html FILE is required (- writes the page to stdout)")
		return exitUsage
	}
	if out == "-" && l.json {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger report: --html - and --json both write stdout: give --html a file")
		return exitUsage
	}
	d, err := l.load(paths, report.ReadOptions{})
	if err != nil {
		return l.fail(err)
	}
	// Every run, for the chains of restarts through runs the filters leave out.
	all := make([]report.Run, d.runs.Len())
	var picked []*report.Run
	for i := range all {
		d.run(i, &all[i])
		if l.keep(&all[i]) {
			picked = append(picked, &all[i])
		}
	}
	picked = picked[max(0, len(picked)-limit):]
	chains := report.Chains(all, picked)
	want := map[string]bool{}
	for _, ch := range chains {
		for _, r := range ch {
			want[r.ID] = true
		}
	}
	entries := l.entriesCapped(d, want, reportEvents)
	page := report.Page{Generated: l.now.In(l.loc).Format("2006-01-02 15:04:05 MST"), Files: len(d.files), Skipped: d.Skipped}
	var buf bytes.Buffer
	failed, err := report.HTML(&buf, page, chains, entries, d.short, l.loc)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger report: %v\n", err)
		return 1
	}
	said := l.c.stdout
	if out == "-" {
		if _, err := l.c.stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger report: write stdout: %v\n", err)
			return 1
		}
		said, out = l.c.stderr, "the page to stdout"
	} else if err := safefile.Write(out, buf.Bytes(), 0o600); err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger report: %v\n", err)
		return 1
	}
	if l.json {
		return l.writeJSON(struct {
			File string `json:"file"`
			Runs int    `json:"runs"`
		}{out, len(want)})
	}
	fmt.Fprintf(said, "wrote %s: %s in %s (%d failed)\n", out, verdict.Plural(len(want), "run"), verdict.Plural(len(chains), "chain"), failed)
	return 0
}

// entriesCapped is entries with at most max records per run: the report
// draws at most report.RowsPerRun rows of a run anyway.
func (l *ledgerCmd) entriesCapped(d *ledgerData, want map[string]bool, limit int) map[string][]ledger.Entry {
	out, _ := l.records(d.files, want, limit)
	return out
}

// records reads the records of the wanted runs, at most limit a run (and
// the end), each run's in order, and which run restarted from each: a second
// pass over the files (those of the runs' ledgers, or all) that parses only
// the lines holding a wanted id (or an escape, which could spell one).
func (l *ledgerCmd) records(files []string, want map[string]bool, limit int) (map[string][]ledger.Entry, map[string]string) {
	out := map[string][]ledger.Entry{}
	next := map[string]string{}
	nextAt := map[string]time.Time{}
	var needles [][]byte
	for id := range want {
		needles = append(needles, []byte(id))
	}
	filter := func(line []byte) bool {
		if bytes.IndexByte(line, '\\') >= 0 {
			return true
		}
		for _, n := range needles {
			if bytes.Contains(line, n) {
				return true
			}
		}
		return false
	}
	for _, path := range files {
		f, err := ledger.OpenRead(path)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger: read %s: %v\n", path, err)
			continue
		}
		s := ledger.NewScanner(f)
		s.Filter = filter
		for s.Scan() {
			cur := s.Entry()
			switch cur.Event {
			case phases.SpawnRequested, phases.Connected, phases.ConnectFailed: // where a run names its previous one
				if prev := cur.Str("previous_run"); want[prev] && cur.Run != prev && !cur.Time.Before(nextAt[prev]) {
					next[prev], nextAt[prev] = cur.Run, cur.Time // as Summary.Runs: the later one
				}
			}
			if want[cur.Run] && (len(out[cur.Run]) < limit || cur.Event == phases.Exited) {
				if e, err := s.Decode(); err == nil {
					out[cur.Run] = append(out[cur.Run], e)
				}
			}
		}
		if s.Err() != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger: read %s: %v\n", path, s.Err())
		}
		f.Close()
	}
	for _, es := range out {
		report.SortEntries(es)
	}
	return out, next
}
