package report

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// ReadOptions says what Read does with the runs besides counting them.
type ReadOptions struct {
	Now        time.Time          // ends the duration of a run still going
	Alive      func(pid int) bool // whether the pid of a run with no end still runs
	StatsSince time.Time          // as Summary.StatsSince

	// Server, when set, is the one server whose runs are judged: the others'
	// are neither judged nor kept (their ids and links are still collected).
	// It is Keep's cheapest part, decided before the judgement.
	Server string
	// Keep says which runs Stats counts and Run sees; nil keeps every run.
	Keep func(*Run) bool
	// Run sees every kept run, judged, once no more of its records can come:
	// r.Answers is nil (Summary.Runs has them); ledger is the files of the
	// run's ledger, the only ones that hold its records. It is called from
	// several goroutines at once; r and ledger are valid during the call.
	Run func(r *Run, ledger []string)

	IDs   bool // collect every run's id, kept or not (Result.IDs)
	Links bool // collect which run restarted which (Result.Next)
}

// Result is what Read found.
type Result struct {
	*Summary                   // the counts, and Stats of the kept runs
	Skipped  int               // lines that were not records
	IDs      *IDs              // every run's id, Done; with ReadOptions.IDs
	Next     map[string]string // a run's id -> the run restarted from it; with ReadOptions.Links
	Errors   []error           // a file that could not be read, whole or in part, in file order
}

// sealAfter is how long, in its ledger's own time, a run that has ended may
// still get records: the shim writes the last ones (the client leaving, the
// restarts given up) at the latest after its longest backoff, --backoff-max,
// which is at most 24h.
const sealAfter = 25 * time.Hour

// Read folds the records of the ledger files into runs, judges each and
// hands it to opts once no more of its records can come: after its end
// record and sealAfter more of its ledger's time, or when its ledger's last
// file is read. So memory grows with the runs open at once, not with all the
// runs read (but for what opts collects).
//
// A run's records are read from its own ledger, a live file and the files
// rotated from it (a shim writes each run to one ledger). Ledgers are read
// in parallel, one per CPU, largest first.
func Read(files []string, opts ReadOptions) *Result {
	groups := groupFiles(files)
	res := &Result{Summary: NewSummary(), Errors: make([]error, len(files))}
	work := make(chan []int)
	results := make(chan *reader)
	workers := min(runtime.GOMAXPROCS(0), len(groups))
	for range workers {
		go func() { // exits when work is closed and its ledgers are read
			r := &reader{opts: opts, files: files, errs: res.Errors, sum: NewSummary(), ids: &IDs{}}
			for g := range work {
				r.ledger(g)
			}
			results <- r
		}()
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	var links []link
	if opts.IDs {
		res.IDs = &IDs{}
	}
	for range workers {
		r := <-results
		res.merge(r.sum)
		res.Skipped += r.skipped
		if opts.IDs {
			res.IDs.Merge(r.ids)
		}
		links = append(links, r.links...)
	}
	res.Errors = slices.DeleteFunc(res.Errors, func(err error) bool { return err == nil })
	if opts.IDs {
		res.IDs.Done()
	}
	if opts.Links {
		// As Summary.Runs: of two runs restarted from one, the later wins.
		slices.SortFunc(links, func(a, b link) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.run, b.run)) })
		res.Next = make(map[string]string, len(links))
		for _, l := range links {
			res.Next[l.previous] = l.run
		}
	}
	return res
}

// groupFiles gathers the files of each ledger (its rotated files, then the
// live one, in the order given), largest ledger first.
func groupFiles(files []string) [][]int {
	var groups [][]int
	var sizes []int64
	at := map[string]int{}
	for i, path := range files {
		live, _ := ledger.SplitRotated(path)
		g, ok := at[live]
		if !ok {
			g = len(groups)
			at[live] = g
			groups = append(groups, nil)
			sizes = append(sizes, 0)
		}
		groups[g] = append(groups[g], i)
		if fi, err := os.Stat(path); err == nil {
			sizes[g] += fi.Size()
		}
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	out := make([][]int, len(groups))
	for i, g := range order {
		out[i] = groups[g]
	}
	return out
}

// reader is one of Read's goroutines: what it found in the ledgers it read.
type reader struct {
	opts    ReadOptions
	files   []string
	errs    []error // shared: each file's slot is written by its reader alone
	sum     *Summary
	skipped int
	ids     *IDs
	links   []link
}

type link struct {
	previous, run string
	start         int64
}

// ledger folds one ledger's files and hands over its runs.
func (r *reader) ledger(files []int) {
	s := NewSummary()
	s.StatsSince = r.opts.StatsSince
	s.judgeOnly = r.opts.Server
	paths := make([]string, len(files))
	for n, i := range files {
		paths[n] = r.files[i]
	}
	sealed := func(run *Run, judged bool) { r.sealed(s, run, judged, paths) }
	for _, i := range files {
		f, err := ledger.OpenRead(r.files[i])
		if err != nil {
			r.errs[i] = fmt.Errorf("read %s: %w", r.files[i], err)
			continue
		}
		sc := ledger.NewScanner(f)
		for sc.Scan() {
			s.Add(sc.Entry())
			s.seal(false, sealAfter, r.opts.Now, r.opts.Alive, sealed)
		}
		if sc.Err() != nil {
			r.errs[i] = fmt.Errorf("read %s: %w", r.files[i], sc.Err())
		}
		r.skipped += sc.Skipped()
		f.Close()
	}
	s.seal(true, 0, r.opts.Now, r.opts.Alive, sealed)
	r.sum.merge(s)
}

// sealed sees a run once no more of its records can come; it was judged
// unless another server's.
func (r *reader) sealed(s *Summary, run *Run, judged bool, ledger []string) {
	if r.opts.IDs {
		r.ids.Add(run.ID)
	}
	if r.opts.Links && run.PreviousRun != "" {
		r.links = append(r.links, link{run.PreviousRun, run.ID, run.Start.UnixNano()})
	}
	if !judged || r.opts.Keep != nil && !r.opts.Keep(run) {
		return
	}
	s.Count(run)
	if r.opts.Run != nil {
		r.opts.Run(run, ledger)
	}
}
