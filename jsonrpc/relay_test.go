package jsonrpc

import (
	"github.com/mcpshim-dev/mcpshim/mcp"

	"bytes"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// splitReader returns its data in pieces whose sizes cycle through sizes,
// the way a pipe hands over whatever the writer managed to write.
type splitReader struct {
	data  []byte
	sizes []int
	n     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := 1
	if len(r.sizes) > 0 {
		size = r.sizes[r.n%len(r.sizes)]
		r.n++
	}
	size = max(1, min(size, len(p), len(r.data)))
	copy(p, r.data[:size])
	r.data = r.data[size:]
	return size, nil
}

func relay(t testing.TB, in []byte, sizes []int, maxObs, hold int, route func(*Line) bool) ([]byte, []Line) {
	t.Helper()
	var out bytes.Buffer
	var lines []Line
	r := &Relay{
		Keep:       func(p []byte) bool { return len(p)%2 == 0 }, // either way, every byte is forwarded
		Src:        &splitReader{data: in, sizes: sizes},
		Dst:        NewWire(&out),
		MaxObserve: maxObs,
		Hold:       hold,
		Route:      route,
		Observe:    func(l *Line) { lines = append(lines, *l) },
	}
	if err := r.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.Bytes(), lines
}

func TestRelayByteExact(t *testing.T) {
	long := strings.Repeat("x", 300<<10)
	cases := map[string]string{
		"empty":          "",
		"one":            `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"crlf":           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n",
		"no final nl":    `{"jsonrpc":"2.0","id":1,"result":{}}`,
		"nul and utf8":   "a\x00b\xff\xfe\n\n\n",
		"batch":          `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n",
		"noise":          "[2026-07-23 16:48:43] INFO listening\nStarting Acme\n",
		"long line":      `{"jsonrpc":"2.0","id":7,"result":{"t":"` + long + `"}}` + "\n",
		"long no nl":     long,
		"blank lines":    "\n\r\n\n",
		"exactly buffer": strings.Repeat("y", readSize),
	}
	for name, in := range cases {
		for _, sizes := range [][]int{nil, {1}, {7, 3, 1000}, {readSize * 2}} {
			for _, hold := range []int{1, 100, 1 << 20} {
				got, lines := relay(t, []byte(in), sizes, 1<<20, hold, nil)
				if !bytes.Equal(got, []byte(in)) {
					t.Fatalf("%s sizes=%v hold=%d: output differs from input (got %d bytes, want %d)", name, sizes, hold, len(got), len(in))
				}
				var total int64
				for _, l := range lines {
					total += l.Size
				}
				if total != int64(len(in)) {
					t.Fatalf("%s: observed sizes sum to %d, want %d", name, total, len(in))
				}
			}
		}
	}
}

func TestRelayObservesAtMostMaxObserve(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":"big","result":{"t":"` + strings.Repeat("z", 1<<20) + `"}}` + "\n"
	got, lines := relay(t, []byte(in), []int{4096}, 1000, 0, nil)
	if !bytes.Equal(got, []byte(in)) {
		t.Fatal("output differs from input")
	}
	if len(lines) != 1 {
		t.Fatalf("got %d lines, want 1", len(lines))
	}
	l := lines[0]
	if len(l.Data) != 1000 || !l.Truncated || l.Size != int64(len(in)) {
		t.Fatalf("got data %d truncated %v size %d, want 1000 true %d", len(l.Data), l.Truncated, l.Size, len(in))
	}
	// The scanner saw the whole line: a complete message, whatever was kept.
	if l.Msg.Kind != mcp.Response || string(l.Msg.RawID) != `"big"` || l.Msg.Partial {
		t.Fatalf("got %v id %s partial %v, want response \"big\" complete", l.Msg.Kind, l.Msg.RawID, l.Msg.Partial)
	}
}

func TestRelayRouteSwallows(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":"mcpshim-1","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	got, lines := relay(t, []byte(in), []int{5}, 1<<20, 0, func(l *Line) bool {
		return string(l.Msg.RawID) != `"mcpshim-1"`
	})
	want := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len(lines) != 2 || lines[0].Forwarded || !lines[1].Forwarded {
		t.Fatalf("got forwarded flags %v, want [false true]", lines)
	}
}

func TestWireTerminatesOpenLine(t *testing.T) {
	var out bytes.Buffer
	w := NewWire(&out)
	r := &Relay{Src: strings.NewReader(`{"jsonrpc":"2.0","id":1,"res`), Dst: w}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	term, err := w.WriteMessage([]byte(`{"jsonrpc":"2.0","id":1,"error":{}}`))
	if err != nil || !term {
		t.Fatalf("got terminated=%v err=%v, want true nil", term, err)
	}
	want := `{"jsonrpc":"2.0","id":1,"res` + "\n" + `{"jsonrpc":"2.0","id":1,"error":{}}` + "\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// FuzzRelay feeds arbitrary streams split at arbitrary points: the output
// always equals the input and the observed sizes add up.
func FuzzRelay(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x"}`+"\n"), uint8(3), uint16(10))
	f.Add([]byte("a\nb\r\nc"), uint8(1), uint16(1))
	f.Add([]byte("[1,2]\n\x00\xff"), uint8(200), uint16(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8, hold uint16) {
		got, lines := relay(t, in, []int{int(step), int(step)/2 + 1}, 64, int(hold), nil)
		if !bytes.Equal(got, in) {
			t.Fatalf("output %q differs from input %q", got, in)
		}
		var total int64
		for _, l := range lines {
			total += l.Size
			if len(l.Data) > 64 {
				t.Fatalf("observed %d bytes, limit 64", len(l.Data))
			}
		}
		if total != int64(len(in)) {
			t.Fatalf("sizes sum to %d, want %d", total, len(in))
		}
	})
}

// TestRelayParkTorn: a torn last line still held whole is parked in the
// Wire: delivered by Flush when nothing follows it, dropped when the shim
// writes after it. A complete value, or a line already streamed, is written.
func TestRelayParkTorn(t *testing.T) {
	first := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	torn := `{"jsonrpc":"2.0","id":4,"result":{"content":[`
	long := `{"jsonrpc":"2.0","id":9,"result":{"t":"` + strings.Repeat("x", readSize+100) + ``
	cases := []struct {
		in, want string // want: before Flush
		hold     int
		parked   bool
	}{
		{first + torn, first, 1 << 20, true},
		// A complete value without its newline is a last line, not a torn one.
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, 1 << 20, false},
		// Past the hold its first part was already on the wire: it stays, to be ended by the Wire.
		{long, long, 100, false},
	}
	for _, c := range cases {
		for _, then := range []string{"flush", "message"} {
			var out bytes.Buffer
			var tail *Line
			w := NewWire(&out)
			w.OnTail = func(l *Line) { tail = l }
			r := &Relay{Src: &splitReader{data: []byte(c.in), sizes: []int{7}}, Dst: w, Hold: c.hold, ParkTorn: true}
			if err := r.Run(); err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Errorf("in %q: got %q before %s, want %q", c.in, out.String(), then, c.want)
			}
			want := c.in
			if then == "flush" {
				w.Flush()
			} else {
				w.WriteMessage([]byte("{}"))
				want = c.want + "{}\n"
				if !c.parked {
					want = c.in + "\n{}\n"
				}
			}
			if out.String() != want {
				t.Errorf("in %q then %s: got %q, want %q", c.in, then, out.String(), want)
			}
			if c.parked != (tail != nil) || tail != nil && (tail.Forwarded != (then == "flush") || !tail.Unterminated || string(tail.Data) != torn) {
				t.Errorf("in %q then %s: parked line %+v, want parked=%v", c.in, then, tail, c.parked)
			}
		}
	}
}

// TestRelayCoalesces: the whole lines one read brings go out in one write,
// and a line is never held back when nothing follows it.
func TestRelayCoalesces(t *testing.T) {
	msg := `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n"
	pr, pw := io.Pipe()
	var writes countingWriter
	r := &Relay{Src: pr, Dst: NewWire(&writes)}
	done := make(chan error)
	go func() { done <- r.Run() }() // returns when pw is closed
	pw.Write([]byte(strings.Repeat(msg, 100)))
	// The pipe hands the 100 lines over in one read: one write, at once.
	for writes.count() < 1 {
		runtime.Gosched()
	}
	pw.Write([]byte(msg))
	for writes.count() < 2 {
		runtime.Gosched()
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := writes.count(); got != 2 {
		t.Errorf("got %d writes for two reads, want 2", got)
	}
	if got, want := writes.String(), strings.Repeat(msg, 101); got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
}

type countingWriter struct {
	mu sync.Mutex
	n  int
	b  bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	return w.b.Write(p)
}

func (w *countingWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *countingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestRelayKeep: a long line is observed up to MaxObserve only when Keep says
// so; otherwise its held prefix is all the tap gets, and the relay still
// forwards every byte.
func TestRelayKeep(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":3,"result":{"tools":[` + strings.Repeat(`{"name":"t"},`, 20000) + `{"name":"u"}]}}` + "\n"
	for _, keep := range []bool{false, true} {
		var out bytes.Buffer
		var got Line
		var asked []byte
		r := &Relay{Src: &splitReader{data: []byte(in), sizes: []int{4096}}, Dst: NewWire(&out), Hold: 1000, MaxObserve: 100000,
			Keep:    func(p []byte) bool { asked = append([]byte(nil), p...); return keep },
			Observe: func(l *Line) { got = *l }}
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
		want := 1000
		if keep {
			want = 100000
		}
		if out.String() != in || len(got.Data) != want || !got.Truncated {
			t.Errorf("keep=%v: forwarded %d of %d bytes, observed %d (truncated %v), want all and %d", keep, out.Len(), len(in), len(got.Data), got.Truncated, want)
		}
		if m := mcp.Peek(asked); string(m.RawID) != "3" || m.Cut != "result" || mcp.FirstKey(m.CutValue) != "tools" {
			t.Errorf("Keep was asked with id %s cut %q first key %q, want 3, result, tools", m.RawID, m.Cut, mcp.FirstKey(m.CutValue))
		}
	}
}

// TestWireEndsADeadStreamsLine: a stream that died in the middle of a long
// line (already streamed, so not droppable) is ended before the next stream
// on the same Wire writes, and the Wire says so.
func TestWireEndsADeadStreamsLine(t *testing.T) {
	var out bytes.Buffer
	w := NewWire(&out)
	ended := 0
	w.OnTerminate = func() { ended++ }
	first := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", readSize+10)
	second := `{"jsonrpc":"2.0","method":"hello"}` + "\n"
	for _, in := range []string{first, second} {
		r := &Relay{Src: strings.NewReader(in), Dst: w, Hold: 100, ParkTorn: true}
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != first+"\n"+second || ended != 1 {
		t.Errorf("got %d bytes ending %q, terminated %d times; want the first line ended before the second, once", out.Len(), out.String()[max(0, out.Len()-60):], ended)
	}
}

// TestRelayUnkeptLinesValidDuringObserve: lines Kept says nobody keeps are
// not copied; their Data and Msg are the reader's buffer, and must still be
// each line's own bytes when Route and Observe see them, however the reads
// split the stream (many lines in one read, lines across reads).
func TestRelayUnkeptLinesValidDuringObserve(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for i := range 3000 {
		method := "notifications/progress"
		if i%7 == 0 {
			method = "ping" // a kept one among them
		}
		line := `{"jsonrpc":"2.0","method":"` + method + `","params":{"n":"` + strings.Repeat("p", i%900) + `"}}`
		want = append(want, line)
		in.WriteString(line + "\n")
	}
	for _, sizes := range [][]int{{1 << 20}, {4096, 17, 65536}, {1000}} {
		var out bytes.Buffer
		var routed, observed []string
		r := &Relay{
			Src:     &splitReader{data: bytes.Clone(in.Bytes()), sizes: sizes},
			Dst:     NewWire(&out),
			Kept:    func(l *Line) bool { return l.Msg.Method != "notifications/progress" },
			Route:   func(l *Line) bool { routed = append(routed, l.Msg.Method+" "+string(l.Data)); return true },
			Observe: func(l *Line) { observed = append(observed, l.Msg.Method+" "+string(l.Data)) },
		}
		if err := r.Run(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !bytes.Equal(out.Bytes(), in.Bytes()) {
			t.Fatalf("reads of %v: the relayed bytes differ from the input", sizes)
		}
		for i, w := range want {
			m := mcp.Peek([]byte(w))
			exp := m.Method + " " + w
			if i >= len(observed) || observed[i] != exp || routed[i] != exp {
				t.Fatalf("reads of %v, line %d: observed %.60q, routed %.60q, want %.60q", sizes, i, at(observed, i), at(routed, i), exp)
			}
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
