package report

import (
	"fmt"
	"os"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// Ledgers is what one pass over ledger files found.
type Ledgers struct {
	Files   []string
	Sum     *Summary
	Runs    []Run // every run, oldest first
	Skipped int
	Short   map[string]string // run id -> shortest unique prefix, for display
}

// Load folds every record of files into per-run aggregates, streaming:
// memory grows with the runs, not with the records. The stats count from
// since; a run is judged at now, alive saying whether its process is still
// there. A file that cannot be read is an error, and the others are read.
func Load(files []string, since, now time.Time, alive func(pid int) bool) (*Ledgers, []error) {
	d := &Ledgers{Files: files, Sum: NewSummary()}
	d.Sum.StatsSince = since
	var errs []error
	for _, path := range files {
		n, err := scanFile(path, func(s *ledger.Scanner) { d.Sum.Add(s.Entry()) })
		d.Skipped += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	d.Runs = d.Sum.Runs(now, alive)
	d.Short = ShortIDs(d.Runs)
	return d, errs
}

// Entries reads the records of the wanted runs, each run's in order, at
// most limit a run besides its exited record. It is the second pass of
// show, why and the HTML report: only their runs are kept whole.
func (d *Ledgers) Entries(want map[string]bool, limit int) (map[string][]ledger.Entry, []error) {
	out := map[string][]ledger.Entry{}
	var errs []error
	for _, path := range d.Files {
		_, err := scanFile(path, func(s *ledger.Scanner) {
			cur := s.Entry()
			if want[cur.Run] && (len(out[cur.Run]) < limit || cur.Event == phases.Exited) {
				if e, err := s.Decode(); err == nil {
					out[cur.Run] = append(out[cur.Run], e)
				}
			}
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, es := range out {
		SortEntries(es)
	}
	return out, errs
}

// scanFile calls fn at every record of path and returns how many lines
// were skipped.
func scanFile(path string, fn func(s *ledger.Scanner)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	s := ledger.NewScanner(f)
	for s.Scan() {
		fn(s)
	}
	if s.Err() != nil {
		return s.Skipped(), fmt.Errorf("read %s: %w", path, s.Err())
	}
	return s.Skipped(), nil
}
