// Package report owns what is read out of a ledger for a person: runs folded
// from their records and judged (through verdict, which owns the judgement),
// the per-server stats with their histograms, and the HTML report. It reads
// records through ledger's scanner and names events through phases; it never
// writes a ledger, never judges a run itself, and is never on the relay's path.
package report

import (
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Run is one run (one child process, or one connection to a remote server):
// what its records say and the verdict on it.
type Run struct {
	verdict.Facts
	verdict.Verdict
	NextRun string `json:"next_run,omitempty"`
}

// Summary folds records into one fold per run, and call statistics per
// server and tool. Its memory grows with runs, servers and tools, never with
// events.
type Summary struct {
	Records int // records folded
	Forged  int // shim-only events reported by a server about itself, ignored
	Lost    int // records the writers counted as lost

	// StatsSince leaves records older than it out of Stats' call figures,
	// restarts and discoveries (runs are still folded whole).
	StatsSince time.Time

	runs    map[string]*verdict.Fold
	servers map[string]*serverAgg
}

// NewSummary returns an empty Summary.
func NewSummary() *Summary {
	return &Summary{runs: make(map[string]*verdict.Fold), servers: make(map[string]*serverAgg)}
}

// Add folds one record in.
func (s *Summary) Add(e *ledger.Entry) {
	s.Records++
	if e.Event == phases.RecordsLost {
		n, _ := e.Int("count")
		s.Lost += int(n)
	}
	if e.Run == "" {
		return // a shim-level record
	}
	f := s.runs[e.Run]
	if f == nil {
		f = &verdict.Fold{}
		s.runs[e.Run] = f
	}
	forged := f.Forged
	f.Add(e)
	if f.Forged > forged {
		s.Forged++
		return
	}
	if s.StatsSince.IsZero() || !e.Time.Before(s.StatsSince) {
		s.server(f.Server).add(e)
	}
}

// Runs returns every run, oldest first, judged. now ends the duration of a
// run still going; alive says whether a pid is still running.
func (s *Summary) Runs(now time.Time, alive func(pid int) bool) []Run {
	out := make([]Run, 0, len(s.runs))
	for _, f := range s.runs {
		if f.Records == 0 {
			continue // only forged records
		}
		up := !f.Ended() && f.PID > 0 && alive != nil && alive(f.PID)
		out = append(out, Run{Facts: f.Facts, Verdict: verdict.Judge(f, now, up)})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	index := make(map[string]int, len(out))
	for i := range out {
		index[out[i].ID] = i
	}
	for i := range out {
		if j, ok := index[out[i].PreviousRun]; ok {
			out[j].NextRun = out[i].ID
		}
	}
	return out
}

// SortEntries orders one run's records as they happened: by time, then seq.
func SortEntries(entries []ledger.Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		if !entries[i].Time.Equal(entries[j].Time) {
			return entries[i].Time.Before(entries[j].Time)
		}
		return entries[i].Seq < entries[j].Seq
	})
}
