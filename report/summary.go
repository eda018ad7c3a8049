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
// server and tool. Its memory grows with the runs it holds open, servers and
// tools, never with events.
type Summary struct {
	Records int // records folded
	Forged  int // shim-only events reported by a server about itself, ignored
	Lost    int // records the writers counted as lost

	// StatsSince leaves records older than it out of Stats' call figures,
	// restarts and discoveries (runs are still folded whole).
	StatsSince time.Time

	runs     map[string]*open
	servers  map[string]*serverAgg
	lastName string     // the server last looked up
	last     *serverAgg // and its statistics

	// What sealing needs (Read): the latest record time seen, the runs with
	// an end record in the order of their last records, the folds of runs
	// sealed (a fold is 1.3 KB: a million made new were 1.4 GB for the
	// collector), and the run each sealed run is judged into.
	latest    int64
	ended     []touch
	free      []*open
	judged    Run
	judgeOnly string // the one server whose runs are judged when sealed, if set
}

// open is a run whose records are still being folded.
type open struct {
	verdict.Fold
	touched int64 // latest when its last record came
}

type touch struct {
	run string
	at  int64
}

// NewSummary returns an empty Summary.
func NewSummary() *Summary {
	return &Summary{runs: make(map[string]*open), servers: make(map[string]*serverAgg)}
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
	s.latest = max(s.latest, e.Time.UnixNano())
	o := s.runs[e.Run]
	if o == nil {
		if n := len(s.free); n > 0 {
			o, s.free = s.free[n-1], s.free[:n-1]
		} else {
			o = &open{}
		}
		s.runs[e.Run] = o
	}
	forged := o.Forged
	o.Add(e)
	o.touched = s.latest
	if o.Ended() {
		s.ended = append(s.ended, touch{e.Run, s.latest})
	}
	if o.Forged > forged {
		s.Forged++
		return
	}
	if s.StatsSince.IsZero() || !e.Time.Before(s.StatsSince) {
		s.server(o.Server).add(e)
	}
}

// Runs returns every run, oldest first, judged. now ends the duration of a
// run still going; alive says whether a pid is still running.
func (s *Summary) Runs(now time.Time, alive func(pid int) bool) []Run {
	out := make([]Run, 0, len(s.runs))
	for _, o := range s.runs {
		if f := &o.Fold; f.Records > 0 { // not only forged records
			out = append(out, Run{Facts: f.Facts, Verdict: verdict.Judge(f, now, up(f, alive))})
		}
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

// up reports whether a run with no end record still runs.
func up(f *verdict.Fold, alive func(pid int) bool) bool {
	return !f.Ended() && f.PID > 0 && alive != nil && alive(f.PID)
}

// seal hands over each run that ended and has had no record while the
// records' times moved on past the window since its last one, or every run
// when all is set, judged unless another server's; they are then forgotten.
func (s *Summary) seal(all bool, window time.Duration, now time.Time, alive func(int) bool, sealed func(r *Run, judged bool)) {
	if all {
		s.ended = s.ended[:0]
		for id, o := range s.runs {
			s.forget(id, o, now, alive, sealed)
		}
		return
	}
	horizon := s.latest - int64(window)
	for len(s.ended) > 0 && s.ended[0].at < horizon {
		t := s.ended[0]
		s.ended = s.ended[1:]
		o := s.runs[t.run]
		if o == nil || o.touched != t.at {
			continue // sealed already, or a later record queued it again
		}
		s.forget(t.run, o, now, alive, sealed)
	}
}

// forget judges a sealed run (without the four answers, which no view of
// many runs shows; not at all when it is another server's), hands it over
// and keeps its fold for reuse.
func (s *Summary) forget(id string, o *open, now time.Time, alive func(int) bool, sealed func(*Run, bool)) {
	delete(s.runs, id)
	if f := &o.Fold; f.Records > 0 {
		if s.judgeOnly != "" && f.Server != s.judgeOnly {
			s.judged = Run{Facts: f.Facts, Verdict: verdict.Verdict{Start: f.Started()}}
			sealed(&s.judged, false)
		} else {
			s.judged = Run{Facts: f.Facts, Verdict: verdict.JudgeWithoutAnswers(f, now, up(f, alive))}
			sealed(&s.judged, true)
		}
	}
	*o = open{}
	s.free = append(s.free, o)
}

// merge adds o's counts and statistics.
func (s *Summary) merge(o *Summary) {
	s.Records += o.Records
	s.Forged += o.Forged
	s.Lost += o.Lost
	for name, g := range o.servers {
		s.server(name).merge(g)
	}
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
