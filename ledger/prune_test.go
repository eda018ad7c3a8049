package ledger_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

func TestPrune(t *testing.T) {
	cutoff := t0
	tests := []struct {
		name        string
		ages        map[string]time.Duration // file -> last written this long before the cutoff (negative: after)
		dir         string                   // a non-empty directory written before the cutoff: its removal fails
		gone        bool                     // a file listed that is no longer there
		dryRun      bool
		wantRemoved []string
		wantKept    int
	}{
		{"nothing", nil, "", false, false, nil, 0},
		{"old files go, fresh ones stay", map[string]time.Duration{"old.jsonl": time.Hour, "fresh.jsonl": -time.Hour}, "", false, false, []string{"old.jsonl"}, 1},
		{"written at the cutoff is kept", map[string]time.Duration{"edge.jsonl": 0}, "", false, false, nil, 1},
		{"dry run removes nothing", map[string]time.Duration{"old.jsonl": time.Hour, "fresh.jsonl": -time.Hour}, "", false, true, []string{"old.jsonl"}, 1},
		{"a failed removal is kept and the rest go on", map[string]time.Duration{"old.jsonl": time.Hour}, "busy", false, false, []string{"old.jsonl"}, 1},
		{"a file that vanished is kept", nil, "", true, false, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for name, age := range tc.ages {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, cutoff.Add(-age), cutoff.Add(-age)); err != nil {
					t.Fatal(err)
				}
				files = append(files, p)
			}
			if tc.dir != "" {
				p := filepath.Join(dir, tc.dir)
				if err := os.MkdirAll(filepath.Join(p, "inside"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, cutoff.Add(-time.Hour), cutoff.Add(-time.Hour)); err != nil {
					t.Fatal(err)
				}
				files = append([]string{p}, files...)
			}
			if tc.gone {
				files = append(files, filepath.Join(dir, "gone.jsonl"))
			}
			slices.Sort(files)
			removed, kept, errs := ledger.Prune(files, cutoff, tc.dryRun)
			var got []string
			for _, r := range removed {
				got = append(got, filepath.Base(r.Path))
				if !r.Modified.Before(cutoff) || r.Bytes != 3 || r.Modified.Location() != time.UTC {
					t.Errorf("Prune(%v): removed %+v, want 3 bytes last written before %v, in UTC", files, r, cutoff)
				}
			}
			if !slices.Equal(got, tc.wantRemoved) || kept != tc.wantKept || (len(errs) > 0) != (tc.dir != "") {
				t.Errorf("Prune(%v, dryRun %v): got removed %v, kept %d, errors %v; want removed %v, kept %d, an error %v",
					files, tc.dryRun, got, kept, errs, tc.wantRemoved, tc.wantKept, tc.dir != "")
			}
			for _, r := range removed {
				if _, err := os.Stat(r.Path); (err == nil) != tc.dryRun {
					t.Errorf("after Prune(dryRun %v), %s exists = %v, want %v", tc.dryRun, r.Path, err == nil, tc.dryRun)
				}
			}
		})
	}
}
