package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// The scripted runs of ledgertest, as this package's tests name them.
type ev = ledgertest.Ev

var t0 = ledgertest.T0

// scanAll reads data and returns the records' lines and the skipped count.
func scanAll(t *testing.T, data []byte) ([]ledger.Entry, int) {
	t.Helper()
	s := ledger.NewScanner(bytes.NewReader(data))
	var out []ledger.Entry
	for s.Scan() {
		e, err := s.Decode()
		if err != nil {
			t.Fatalf("Decode of a scanned record %q: %v", s.Line(), err)
		}
		out = append(out, e)
	}
	if s.Err() != nil {
		t.Fatalf("scan: %v", s.Err())
	}
	return out, s.Skipped()
}

func TestScannerLines(t *testing.T) {
	var good bytes.Buffer
	ledgertest.HealthyRun(&good, "fs", "run_A")
	lines := strings.SplitAfter(strings.TrimSuffix(good.String(), "\n"), "\n")
	first := strings.TrimSuffix(lines[0], "\n")
	tests := []struct {
		name          string
		data          string
		events        []string
		skipped       int
		wantLastField string // a field of the last record to read back
	}{
		{"empty", "", nil, 0, ""},
		{"blank lines", "\n\n  \n", nil, 0, ""},
		{"one record", first + "\n", []string{phases.SpawnRequested}, 0, ""},
		{"no final newline", first, []string{phases.SpawnRequested}, 0, ""},
		{"crlf", first + "\r\n", []string{phases.SpawnRequested}, 0, ""},
		{"garbage", "hello\n" + first + "\n{not json}\n", []string{phases.SpawnRequested}, 2, ""},
		{"torn last line", first + "\n" + first[:40], []string{phases.SpawnRequested}, 1, ""},
		{"torn line glued to the next writer's record", first[:50] + first + "\n", []string{phases.SpawnRequested}, 1, ""},
		{"NULs from a crash before a record", "\x00\x00\x00" + first + "\n", []string{phases.SpawnRequested}, 1, ""},
		{"json but not a record", `{"a":1}` + "\n" + `[1,2]` + "\n" + `{"ts":"yesterday","run":"r","event":"x"}` + "\n", nil, 3, ""},
		{"no run and no event", `{"ts":"2026-11-29T08:00:00Z","seq":1}` + "\n", nil, 1, ""},
		{"trailing bytes after the object", first + "x\n", nil, 1, ""},
		{"unknown event and fields from a newer version",
			`{"ts":"2026-11-29T08:00:00Z","run":"run_B","seq":1,"event":"quantum_flux","flux":{"a":[1,2,{"b":null}]},"level":9.5}` + "\n",
			[]string{"quantum_flux"}, 0, "flux"},
		{"escaped strings", `{"ts":"2026-11-29T08:00:00Z","run":"run_\u0042","event":"x","msg":"a\"b\\c\u00e9\n"}` + "\n", []string{"x"}, 0, "msg"},
		{"duplicate keys: the last wins", `{"ts":"2026-11-29T08:00:00Z","run":"a","run":"b","event":"x"}` + "\n", []string{"x"}, 0, ""},
		{"wrong types read as zero", `{"ts":"2026-11-29T08:00:00Z","run":7,"seq":"x","pid":1.5,"event":"e"}` + "\n", []string{"e"}, 0, ""},
		{"line too long", strings.Repeat("x", ledger.MaxLine+10) + "\n" + first + "\n", []string{phases.SpawnRequested}, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, skipped := scanAll(t, []byte(tc.data))
			var events []string
			for _, e := range entries {
				events = append(events, e.Event)
			}
			if !slices.Equal(events, tc.events) || skipped != tc.skipped {
				t.Errorf("scan %.80q: got events %v skipped %d, want %v skipped %d", tc.data, events, skipped, tc.events, tc.skipped)
			}
		})
	}
}

// TestScannerAgreesWithDecode checks the fast path against Decode on every
// record of a realistic run and on odd lines.
func TestScannerAgreesWithDecode(t *testing.T) {
	var buf bytes.Buffer
	ledgertest.HealthyRun(&buf, "fs", "run_A")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	lines = append(lines,
		[]byte(`{"ts":"2026-11-29T08:00:00.5+01:00","run":"r","event":"x","seq":99999999999999999999,"pid":-3,"n":1e400,"f":-0.5e-3,"t":true,"l":["a",1,"b"]}`),
		[]byte(`{"ts":"2026-11-29T08:00:00Z","run":"r","event":"x","bad\xffkey":"v\xfe"}`),
		[]byte(`{"ts":"2026-11-29T08:00:00Z","r\u0075n":"r","event":"x"}`),
	)
	for _, depth := range []int{9998, 9999, 10000} { // encoding/json's nesting limit
		lines = append(lines, []byte(`{"ts":"2026-11-29T08:00:00Z","run":"r","event":"x","deep":`+
			strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`))
	}
	for _, line := range lines {
		checkAgreement(t, line)
	}
}

// checkAgreement asserts the Scanner accepts line exactly when it is valid
// JSON that Decode accepts, and then reads the same values.
func checkAgreement(t *testing.T, line []byte) {
	t.Helper()
	s := ledger.NewScanner(nil)
	h := s.Entry()
	got := s.Parse(line)
	e, err := ledger.Decode(line)
	want := err == nil && json.Valid(line)
	if got != want {
		t.Fatalf("parse(%q) = %v, want %v (Decode error %v, json.Valid %v)", line, got, want, err, json.Valid(line))
	}
	if !got {
		return
	}
	if !h.Time.Equal(e.Time) || h.Shim != e.Shim || h.Run != e.Run || h.Seq != e.Seq || h.Server != e.Server ||
		h.PID != e.PID || h.Origin != e.Origin || h.Phase != e.Phase || h.Event != e.Event {
		t.Fatalf("parse(%q): got head %v %q %q %d %q %d %q %q %q, want %v %q %q %d %q %d %q %q %q", line,
			h.Time, h.Shim, h.Run, h.Seq, h.Server, h.PID, h.Origin, h.Phase, h.Event,
			e.Time, e.Shim, e.Run, e.Seq, e.Server, e.PID, e.Origin, e.Phase, e.Event)
	}
	keys := h.FieldKeys()
	if !slices.Equal(keys, e.FieldKeys()) {
		t.Fatalf("parse(%q): got fields %v, want %v", line, keys, e.FieldKeys())
	}
	for _, k := range keys {
		gi, gok := h.Int(k)
		wi, wok := e.Int(k)
		gf, gfok := h.Float(k)
		wf, wfok := e.Float(k)
		if h.Str(k) != e.Str(k) || gi != wi || gok != wok || gfok != wfok || (gfok && gf != wf && !(gf != gf && wf != wf)) ||
			h.Bool(k) != e.Bool(k) || h.False(k) != e.False(k) || !slices.Equal(h.Strs(k), e.Strs(k)) || !h.Has(k) || !e.Has(k) {
			t.Fatalf("parse(%q) field %q: got %q %d,%v %v,%v %v,%v %q, want %q %d,%v %v,%v %v,%v %q", line, k,
				h.Str(k), gi, gok, gf, gfok, h.Bool(k), h.False(k), h.Strs(k), e.Str(k), wi, wok, wf, wfok, e.Bool(k), e.False(k), e.Strs(k))
		}
	}
}

func FuzzScanner(f *testing.F) {
	var buf bytes.Buffer
	ledgertest.HealthyRun(&buf, "fs", "run_A")
	for _, l := range bytes.Split(buf.Bytes(), []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte(`{"ts":"2026-11-29T08:00:00Z","run":"r","event":"x","a":[{"b":[]}],"c":"\ud83d\ude00"}`))
	f.Add([]byte(`{"ts":"2026-11-29T08:00:00Z","run":"r"` + "\x00" + `{"ts":"2026-11-29T08:00:00Z","run":"r","event":"x"}`))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		// Any stream: never a panic, and every record read decodes.
		s := ledger.NewScanner(bytes.NewReader(data))
		for s.Scan() {
			if _, err := s.Decode(); err != nil {
				t.Fatalf("scanned record %q does not decode: %v", s.Line(), err)
			}
			_ = s.Entry().Strs("tools")
		}
		// One line: the fast path agrees with Decode.
		if bytes.IndexByte(data, '\n') < 0 {
			checkAgreement(t, data)
		}
	})
}

// TestTruncatedLastRecord cuts a real ledger at every byte offset of its last
// record, as a crash mid-write would, and then lets another shim append.
func TestTruncatedLastRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fs.jsonl")
	l, err := ledger.Open(ledger.Options{Path: path, Shim: "shim_1", Server: "fs"})
	if err != nil {
		t.Fatal(err)
	}
	for i, event := range []string{phases.SpawnRequested, phases.Spawned, phases.InitializeReceived, phases.InitializeResponded, phases.ToolsListResponded, phases.Exited} {
		l.Write(&ledger.Record{Time: t0.Add(time.Duration(i) * time.Millisecond), Run: "run_A", PID: 7, Phase: ledgertest.PhaseOf(event), Event: event,
			Fields: []ledger.Field{ledger.F("request_id", "1"), ledger.F("stderr_tail", []string{"bye"}), ledger.F("exit_code", 0), ledger.F("handshake", true)}})
	}
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	next := ledger.Record{Time: t0.Add(time.Second), Shim: "shim_2", Run: "run_B", Seq: 1, Server: "fs", PID: 8, Phase: phases.Launch, Event: phases.SpawnRequested}
	var nextLine bytes.Buffer
	next.Encode(&nextLine)
	for k := 0; k <= len(data)-cut; k++ {
		torn := data[:cut+k]
		entries, skipped := scanAll(t, torn)
		whole := k >= len(data)-cut-1 // only the newline is missing, or nothing
		wantN, wantSkipped := 5, 0
		if whole {
			wantN = 6
		} else if k > 0 {
			wantSkipped = 1
		}
		if len(entries) != wantN || skipped != wantSkipped {
			t.Fatalf("cut at %d of %d: got %d records, %d skipped, want %d, %d", k, len(data)-cut, len(entries), skipped, wantN, wantSkipped)
		}
		sum := report.NewSummary()
		s := ledger.NewScanner(bytes.NewReader(torn))
		for s.Scan() {
			sum.Add(s.Entry())
		}
		runs := sum.Runs(t0, func(int) bool { return false })
		wantOutcome := verdict.Unrecorded
		if whole {
			wantOutcome = verdict.Ended
		}
		if len(runs) != 1 || runs[0].Outcome != wantOutcome {
			t.Fatalf("cut at %d: got runs %+v, want one %s", k, runs, wantOutcome)
		}
		// The next shim appends to the torn file: its record must survive.
		glued := append(slices.Clip(torn), nextLine.Bytes()...)
		entries, _ = scanAll(t, glued)
		if last := entries[len(entries)-1]; last.Run != "run_B" {
			t.Fatalf("cut at %d then append: got last record %s/%s, want run_B's spawn_requested", k, last.Run, last.Event)
		}
	}
}

func TestScannerReadsTestdata(t *testing.T) {
	data, err := os.ReadFile("testdata/reader/hostile.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	entries, skipped := scanAll(t, data)
	runs := map[string]int{}
	for _, e := range entries {
		runs[e.Run]++
	}
	want := map[string]int{"run_01KB00000000000000000000A1": 4, "run_01KB00000000000000000000B1": 3, "run_01KB00000000000000000000C1": 1}
	if fmt.Sprint(runs) != fmt.Sprint(want) || skipped != 5 {
		t.Errorf("hostile.jsonl: got records per run %v, %d skipped, want %v, 5 skipped", runs, skipped, want)
	}
}

func TestFilesOrdersRotatedFirst(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "fs.jsonl")
	names := []string{
		live,
		ledger.RotatedName(live, t0.Add(time.Hour)),
		ledger.RotatedName(live, t0),
		filepath.Join(dir, "a.jsonl"),
		filepath.Join(dir, "notes.txt"),
	}
	for _, n := range names {
		if err := os.WriteFile(n, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ledger.Files([]string{dir, live})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{names[3], names[2], names[1], names[0]}
	if !slices.Equal(got, want) {
		t.Errorf("Files(%s, %s): got %v, want %v", dir, live, got, want)
	}
	if _, err := ledger.Files([]string{filepath.Join(dir, "missing")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Files(missing): got %v, want a not-exist error", err)
	}
}

func TestSplitRotated(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 40, 0, 123e6, time.UTC)
	tests := []struct {
		path, live string
		at         time.Time
	}{
		{"/l/fs.jsonl", "/l/fs.jsonl", time.Time{}},
		{ledger.RotatedName("/l/fs.jsonl", at), "/l/fs.jsonl", at},
		{ledger.RotatedName("/l/my.server.jsonl", at), "/l/my.server.jsonl", at},
		{"/l/my.server.jsonl", "/l/my.server.jsonl", time.Time{}},
		{"/l/x.2026.jsonl", "/l/x.2026.jsonl", time.Time{}},
		// rotate's names: -PID, and -N for a second one in a millisecond
		{"/l/fs.20261129T154000.123Z-4242.jsonl", "/l/fs.jsonl", at},
		{"/l/fs.20261129T154000.123Z-4242-2.jsonl", "/l/fs.jsonl", at},
		{"/l/fs.20261129T154000.123Z-2.jsonl", "/l/fs.jsonl", at}, // before: -N alone
	}
	for _, tc := range tests {
		live, rot := ledger.SplitRotated(tc.path)
		if live != tc.live || !rot.Equal(tc.at) {
			t.Errorf("SplitRotated(%q): got %q %v, want %q %v", tc.path, live, rot, tc.live, tc.at)
		}
	}
}

func BenchmarkScanSummary(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 2000; i++ {
		ledgertest.HealthyRun(&buf, fmt.Sprintf("srv%d", i%20), fmt.Sprintf("run_%06d", i))
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sum := report.NewSummary()
		s := ledger.NewScanner(bytes.NewReader(data))
		for s.Scan() {
			sum.Add(s.Entry())
		}
	}
}
