package phases

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

func readEntries(t *testing.T, path string) []Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := Decode(line)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func TestLedgerFileModesAndFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mcpshim", "fs.jsonl")
	var events bytes.Buffer
	l, err := OpenLedger(LedgerOptions{Path: path, Shim: "shim_1", Server: "fs", Events: &events})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(&Record{Run: "run_1", PID: 7, Phase: Launch, Event: Spawned, Fields: []Field{F("pid", 7), F("argv", []string{"a b"}), F("latency_ms", 1500*time.Microsecond)}})
	l.Close()
	st, _ := os.Stat(path)
	dir, _ := os.Stat(filepath.Dir(path))
	if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Errorf("modes file %v dir %v, want 0600 0700", st.Mode().Perm(), dir.Mode().Perm())
	}
	es := readEntries(t, path)
	e := es[0]
	if e.Seq != 1 || e.Shim != "shim_1" || e.Server != "fs" || e.Run != "run_1" || e.Event != Spawned {
		t.Errorf("got %+v, want seq 1, shim_1, fs, run_1, spawned", e)
	}
	if f, _ := e.Float("latency_ms"); f != 1.5 {
		t.Errorf("latency_ms = %v, want 1.5", f)
	}
	if !strings.Contains(events.String(), "mcpshim[fs]") || !strings.Contains(events.String(), `argv=["a b"]`) {
		t.Errorf("readable event line = %q", events.String())
	}
}

// TestLedgerFullDisk writes to /dev/full: the session carries on, one clear
// line says so, and nothing panics.
func TestLedgerFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	var events bytes.Buffer
	l, _ := OpenLedger(LedgerOptions{Path: "/dev/full", Events: &events})
	for range 3 {
		l.Write(&Record{Run: "r", Phase: Launch, Event: Spawned})
	}
	if l.Lost() != 3 {
		t.Errorf("lost = %d, want 3", l.Lost())
	}
	if n := strings.Count(events.String(), "write failed"); n != 1 {
		t.Errorf("%d 'write failed' lines, want exactly 1:\n%s", n, events.String())
	}
}

// TestLedgerLostRecordsAreCounted: records that did not fit are written as
// records_lost before the next record.
func TestLedgerLostRecordsAreCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := OpenLedger(LedgerOptions{Path: path})
	l.Skip(5)
	l.Write(&Record{Run: "r", Phase: Launch, Event: Exited})
	l.Close()
	es := readEntries(t, path)
	if len(es) != 2 || es[0].Event != RecordsLost {
		t.Fatalf("got %v, want records_lost then exited", es)
	}
	if n, _ := es[0].Int("count"); n != 5 {
		t.Errorf("records_lost.count = %d, want 5", n)
	}
}

func TestLedgerRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fs.jsonl")
	l, _ := OpenLedger(LedgerOptions{Path: path, MaxSize: 1000})
	for range 30 {
		l.Write(&Record{Run: "r", Phase: Launch, Event: Spawned, Fields: []Field{F("pad", strings.Repeat("x", 100))}})
	}
	l.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "fs.*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no rotated file")
	}
	total := 0
	for _, f := range append(files, path) {
		total += len(readEntries(t, f))
	}
	if total != 30 {
		t.Errorf("%d records over the files, want 30", total)
	}
}

// TestRecorderNeverBlocks: with a tiny queue and a slow ledger the relay's
// hand-off returns at once, and what did not fit is counted.
func TestRecorderNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := OpenLedger(LedgerOptions{Path: path})
	r := NewRecorder(l, &Tracker{}, RecorderOptions{Queue: 1, MaxBytes: 64})
	start := time.Now()
	for range 1000 {
		data := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
		r.Line(FromServer, &jsonrpc.Line{Data: data, Size: int64(len(data)), Msg: mcp.Peek(data), End: time.Now()})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 hand-offs took %v", d)
	}
	dropped := r.Dropped()
	r.Close()
	if dropped == 0 {
		t.Fatal("nothing dropped with a queue of one")
	}
	es := readEntries(t, path)
	var lost int64
	for _, e := range es {
		if e.Event == RecordsLost {
			n, _ := e.Int("count")
			lost += n
		}
	}
	if lost != int64(dropped) {
		t.Errorf("records_lost counts %d, want %d dropped", lost, dropped)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"key sk-test-123456789abcdef":           "key [REDACTED]",
		"token=hunter2hunter2 user=me":          "token=[REDACTED] user=me",
		"https://me:pw@host/x":                  "https://[REDACTED]@host/x",
		"ghp_abcdefghijklmnopqrstuvwxyz0123":    "[REDACTED]",
		"fatal: missing API key":                "fatal: missing API key",
		`{"api_key":"abcd1234efgh","name":"x"}`: `{"api_key":[REDACTED],"name":"x"}`,
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := RedactArgs([]string{"--token", "abc", "--name", "x", "--api-key=zzzz1234"}); strings.Join(got, " ") != "--token [REDACTED] --name x --api-key=[REDACTED]" {
		t.Errorf("RedactArgs = %q", got)
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	a := NewID("run", time.Unix(1000, 0))
	b := NewID("run", time.Unix(1001, 0))
	if !(a < b) || len(a) != len("run_")+26 || !strings.HasPrefix(a, "run_") {
		t.Errorf("ids %q %q: want time-sorted, 26 digits", a, b)
	}
}

// TestLedgerSkippedLeaveSeqGap: records dropped before they reached the
// ledger leave as many seq numbers out, then records_lost says how many.
func TestLedgerSkippedLeaveSeqGap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := OpenLedger(LedgerOptions{Path: path})
	l.Write(&Record{Run: "r", Phase: Launch, Event: Spawned})
	l.Skip(3)
	l.Write(&Record{Run: "r", Phase: Launch, Event: Exited})
	l.Close()
	var got []string
	for _, e := range readEntries(t, path) {
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
	l, _ := OpenLedger(LedgerOptions{Path: path, Events: &events})
	l.Hold()
	for range 10 {
		l.Write(&Record{Run: "r", Phase: Execution, Event: RequestReceived})
	}
	if data, _ := os.ReadFile(path); len(data) != 0 || events.n != 0 {
		t.Fatalf("before Flush: %d bytes in the file, %d writes to the log; want none", len(data), events.n)
	}
	l.Flush()
	if n := len(readEntries(t, path)); n != 10 || events.n != 1 || strings.Count(events.b.String(), "\n") != 10 {
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
			l, err := OpenLedger(LedgerOptions{Path: path, Shim: fmt.Sprint("shim", w), MaxSize: 1 << 30})
			if err != nil {
				t.Error(err)
				return
			}
			for range batches {
				l.Hold()
				for range perBatch {
					l.Write(&Record{Run: "r", Phase: Execution, Event: RequestReceived, Fields: []Field{F("pad", pad)}})
				}
				l.Flush()
			}
			l.Close()
		}()
	}
	wg.Wait()
	seqs := map[string]uint64{}
	es := readEntries(t, path) // fails on any line that is not one record
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

// TestRecorderFoldsNotificationFloods: progress and message notifications
// become one count record per direction and method; the rest stays one
// record per message.
func TestRecorderFoldsNotificationFloods(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, _ := OpenLedger(LedgerOptions{Path: path})
	r := NewRecorder(l, &Tracker{}, RecorderOptions{})
	r.Emit(Record{Time: time.Now(), Run: "r", PID: 1, Phase: Launch, Event: Spawned})
	line := func(dir Dir, s string) {
		data := []byte(s)
		r.Line(dir, &jsonrpc.Line{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: time.Now()})
	}
	for range 300 {
		line(FromServer, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`)
		line(FromServer, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	}
	line(FromClient, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	line(FromServer, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	r.Emit(Record{Time: time.Now(), Run: "r", PID: 1, Phase: Launch, Event: Exited})
	r.Close()
	counts := map[string]int64{}
	var got []string
	for _, e := range readEntries(t, path) {
		got = append(got, e.Event)
		if e.Event == NotificationsFolded {
			n, _ := e.Int("count")
			counts[fmt.Sprint(e.Fields["direction"], " ", e.Fields["method"])] += n
		}
	}
	want := map[string]int64{"server notifications/message": 300, "server notifications/progress": 300}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("folded counts %v, want %v", counts, want)
	}
	if n := strings.Count(strings.Join(got, " "), "request_"); n != 2 || len(got) > 8 {
		t.Errorf("got events %v, want spawned, the ping's two records, the folded counts and exited", got)
	}
}
