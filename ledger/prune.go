package ledger

import (
	"os"
	"time"
)

// Removed is a ledger file Prune removed, or would have with dryRun.
type Removed struct {
	Path     string    `json:"path"`
	Bytes    int64     `json:"bytes"`
	Modified time.Time `json:"modified"` // UTC
}

// Prune removes the files last written before cutoff, whole: a ledger is
// never cut inside. A file it cannot stat or remove is kept, and a failed
// removal is one of errs; the rest go on. With dryRun it removes nothing and
// says what it would have.
func Prune(files []string, cutoff time.Time, dryRun bool) (removed []Removed, kept int, errs []error) {
	removed = []Removed{}
	for _, path := range files {
		fi, err := os.Stat(path)
		if err != nil || !fi.ModTime().Before(cutoff) {
			kept++
			continue
		}
		if !dryRun {
			if err := os.Remove(path); err != nil {
				errs = append(errs, err)
				kept++
				continue
			}
		}
		removed = append(removed, Removed{path, fi.Size(), fi.ModTime().UTC()})
	}
	return removed, kept, errs
}
