package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// TestFollower: the last records of each file, then what is appended, a
// rotated file followed under its new name and a new file read whole.
func TestFollower(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fs.jsonl")
	rec := func(seq int) string {
		return fmt.Sprintf(`{"ts":"2026-07-28T10:00:%02dZ","seq":%d,"run":"run_A","event":"e%d"}`+"\n", seq, seq, seq)
	}
	appendTo := func(p string, s string) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendTo(path, rec(1)+rec(2)+rec(3))
	events := func(recs []ledger.Tailed) string {
		var out []string
		for _, r := range recs {
			out = append(out, r.Entry.Event)
		}
		return strings.Join(out, " ")
	}
	last, fol, errs := ledger.Last([]string{path}, 2)
	if got := events(last); got != "e2 e3" || len(errs) != 0 {
		t.Fatalf("Last(2) = %q, %v; want e2 e3", got, errs)
	}
	appendTo(path, rec(4)+`{"ts":"2026-07-28T10:00:05Z","seq":5,"ev`) // the last line is still being written
	if got := events(fol.Poll([]string{path})); got != "e4" {
		t.Errorf("Poll after an append = %q, want e4", got)
	}
	rotated := filepath.Join(dir, "fs.20260728T100006.000Z.jsonl")
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	appendTo(rotated, `ent":"e5"}`+"\n")
	appendTo(path, rec(6))
	if got := events(fol.Poll([]string{rotated, path})); got != "e5 e6" {
		t.Errorf("Poll after rotation = %q, want e5 e6 (the rotated file's rest, then the new file whole)", got)
	}
}

// TestFilesOrDefault: no paths means the default directory; one that does
// not exist yet is no ledger yet, not an error.
func TestFilesOrDefault(t *testing.T) {
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	files, noneYet, err := ledger.FilesOrDefault(nil, getenv)
	if files != nil || noneYet != filepath.Join(state, "mcpshim") || err != nil {
		t.Errorf("FilesOrDefault with no directory = %v, %q, %v; want none, %q, nil", files, noneYet, err, filepath.Join(state, "mcpshim"))
	}
	if _, _, err := ledger.FilesOrDefault([]string{filepath.Join(state, "nope.jsonl")}, getenv); err == nil {
		t.Errorf("FilesOrDefault of a missing path: no error, want one")
	}
}
