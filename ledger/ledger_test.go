package ledger_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

func TestLedgerFileModesAndFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mcpshim", "fs.jsonl")
	var events bytes.Buffer
	l, err := ledger.Open(ledger.Options{Path: path, Shim: "shim_1", Server: "fs", Events: &events})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(&ledger.Record{Run: "run_1", PID: 7, Phase: phases.Launch, Event: phases.Spawned, Fields: []ledger.Field{ledger.F("pid", 7), ledger.F("argv", []string{"a b"}), ledger.F("latency_ms", 1500*time.Microsecond)}})
	l.Close()
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := safefile.CheckPrivate(p); err != nil {
			t.Errorf("the ledger is not its owner's only: %v", err) // 0600 and 0700 on Unix
		}
	}
	es := ledgertest.ReadEntries(t, path)
	e := es[0]
	if e.Seq != 1 || e.Shim != "shim_1" || e.Server != "fs" || e.Run != "run_1" || e.Event != phases.Spawned {
		t.Errorf("got %+v, want seq 1, shim_1, fs, run_1, spawned", e)
	}
	if f, _ := e.Float("latency_ms"); f != 1.5 {
		t.Errorf("latency_ms = %v, want 1.5", f)
	}
	if !strings.Contains(events.String(), "mcpshim[fs]") || !strings.Contains(events.String(), `argv=["a b"]`) {
		t.Errorf("readable event line = %q", events.String())
	}
}

// TestLedgerLostRecordsAreCounted: records that did not fit are written as
// records_lost before the next record.
func TestLedgerLostRecordsAreCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	l.Skip(5)
	l.Write(&ledger.Record{Run: "r", Phase: phases.Launch, Event: phases.Exited})
	l.Close()
	es := ledgertest.ReadEntries(t, path)
	if len(es) != 2 || es[0].Event != phases.RecordsLost {
		t.Fatalf("got %v, want records_lost then exited", es)
	}
	if n, _ := es[0].Int("count"); n != 5 {
		t.Errorf("records_lost.count = %d, want 5", n)
	}
}

func TestLedgerRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fs.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path, MaxSize: 1000})
	for range 30 {
		l.Write(&ledger.Record{Run: "r", Phase: phases.Launch, Event: phases.Spawned, Fields: []ledger.Field{ledger.F("pad", strings.Repeat("x", 100))}})
	}
	l.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "fs.*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no rotated file")
	}
	total := 0
	for _, f := range append(files, path) {
		total += len(ledgertest.ReadEntries(t, f))
	}
	if total != 30 {
		t.Errorf("%d records over the files, want 30", total)
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	a := ledger.NewID("run", time.Unix(1000, 0))
	b := ledger.NewID("run", time.Unix(1001, 0))
	if !(a < b) || len(a) != len("run_")+26 || !strings.HasPrefix(a, "run_") {
		t.Errorf("ids %q %q: want time-sorted, 26 digits", a, b)
	}
}

// TestLedgerSkippedLeaveSeqGap: records dropped before they reached the
// ledger leave as many seq numbers out, then records_lost says how many.
func TestLedgerSkippedLeaveSeqGap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := ledger.Open(ledger.Options{Path: path})
	l.Write(&ledger.Record{Run: "r", Phase: phases.Launch, Event: phases.Spawned})
	l.Skip(3)
	l.Write(&ledger.Record{Run: "r", Phase: phases.Launch, Event: phases.Exited})
	l.Close()
	var got []string
	for _, e := range ledgertest.ReadEntries(t, path) {
		got = append(got, fmt.Sprintf("%d %s", e.Seq, e.Event))
	}
	if want := []string{"1 spawned", "5 records_lost", "6 exited"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestLedgerHoldWritesOnce: held records go out at Flush, in one write to
// the log.
func TestLedgerHoldWritesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	var events countingWriter
	l, _ := ledger.Open(ledger.Options{Path: path, Events: &events})
	l.Hold()
	for range 10 {
		l.Write(&ledger.Record{Run: "r", Phase: phases.Execution, Event: phases.RequestReceived})
	}
	if data, _ := os.ReadFile(path); len(data) != 0 || events.n != 0 {
		t.Fatalf("before Flush: %d bytes in the file, %d writes to the log; want none", len(data), events.n)
	}
	l.Flush()
	if n := len(ledgertest.ReadEntries(t, path)); n != 10 || events.n != 1 || strings.Count(events.b.String(), "\n") != 10 {
		t.Errorf("after Flush: %d records, %d writes to the log with %d lines; want 10, 1, 10", n, events.n, strings.Count(events.b.String(), "\n"))
	}
	l.Close()
}

type countingWriter struct {
	n int
	b bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n++
	return w.b.Write(p)
}

// TestLedgerSharedFileNeverInterleaves: several ledgers (as several shims
// do) append batches of long records to one file; every line is one whole
// record.
func TestLedgerSharedFileNeverInterleaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	const writers, batches, perBatch = 4, 50, 20
	pad := strings.Repeat("p", 3000)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.Open(ledger.Options{Path: path, Shim: fmt.Sprint("shim", w), MaxSize: 1 << 30})
			if err != nil {
				t.Error(err)
				return
			}
			for range batches {
				l.Hold()
				for range perBatch {
					l.Write(&ledger.Record{Run: "r", Phase: phases.Execution, Event: phases.RequestReceived, Fields: []ledger.Field{ledger.F("pad", pad)}})
				}
				l.Flush()
			}
			l.Close()
		}()
	}
	wg.Wait()
	seqs := map[string]uint64{}
	es := ledgertest.ReadEntries(t, path) // fails on any line that is not one record
	for _, e := range es {
		if e.Seq != seqs[e.Shim]+1 {
			t.Fatalf("%s: seq %d after %d", e.Shim, e.Seq, seqs[e.Shim])
		}
		seqs[e.Shim] = e.Seq
	}
	if len(es) != writers*batches*perBatch {
		t.Errorf("got %d records, want %d", len(es), writers*batches*perBatch)
	}
}
