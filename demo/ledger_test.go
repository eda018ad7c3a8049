package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLedger: a kept --dir holds earlier records; only the ones past
// the offset are this demo's, unless the file was rotated meanwhile.
func TestReadLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "healthy.jsonl")
	old := `{"ts":"2026-07-28T10:00:00Z","run":"run_old","event":"spawned"}` + "\n"
	cur := `{"ts":"2026-07-28T11:00:00Z","run":"run_new","event":"spawned"}` + "\n" + "not a record\n"
	if err := os.WriteFile(path, []byte(old+cur), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		offset int64
		want   []string
	}{
		{0, []string{"run_old", "run_new"}},
		{int64(len(old)), []string{"run_new"}},
		{int64(len(old+cur)) + 100, []string{"run_old", "run_new"}}, // rotated: shorter than before
	}
	for _, tt := range tests {
		es, runs, err := readLedger(path, tt.offset)
		if err != nil {
			t.Fatalf("readLedger(offset %d): %v", tt.offset, err)
		}
		var got, judged []string
		for _, e := range es {
			got = append(got, e.Run)
		}
		for _, r := range runs {
			judged = append(judged, r.ID)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") || strings.Join(judged, " ") != strings.Join(tt.want, " ") {
			t.Errorf("readLedger(offset %d) = entries of %v, runs %v; want %v for both", tt.offset, got, judged, tt.want)
		}
	}
}
