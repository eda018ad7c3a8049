package phases

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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
