package mcp

import (
	"strings"
	"testing"
)

// feed scans line in chunks of n bytes, keeping only the first keep bytes.
func feed(line string, n, keep int) Msg {
	var s Scanner
	for i := 0; i < len(line); i += n {
		s.Write([]byte(line[i:min(i+n, len(line))]))
	}
	return s.Msg([]byte(line[:min(keep, len(line))]))
}

func TestScannerIDLast(t *testing.T) {
	big := strings.Repeat(`x\"\\y`, 1<<16)
	lines := []struct {
		line string
		kind Kind
		id   string
	}{
		{`{"result":{"content":[{"type":"text","text":"` + big + `"}],"isError":true},"jsonrpc":"2.0","id":7}`, Response, `7`},
		{`{"error":{"code":-1,"message":"` + big + `"},"jsonrpc":"2.0","id":"a\/b"}`, ErrorResponse, `"a\/b"`},
		{`{"params":{"name":"` + big + `"},"method":"tools/call","jsonrpc":"2.0","id":1e0}` + "\n", Request, `1e0`},
		{`{"jsonrpc":"2.0","id":3,"result":{"text":"` + big + `"}}`, Response, `3`},
	}
	for _, c := range lines {
		want, _ := ParseID([]byte(c.id))
		for _, n := range []int{1, 7, 64 << 10, len(c.line)} {
			for _, keep := range []int{0, 100, len(c.line)} {
				m := feed(c.line, n, keep)
				if m.Kind != c.kind || m.ID != want || string(m.RawID) != c.id || m.Partial {
					t.Fatalf("chunks of %d keeping %d of %.60q…: got kind %v id %v raw %s partial %v, want %v %v", n, keep, c.line, m.Kind, m.ID, m.RawID, m.Partial, c.kind, want)
				}
			}
		}
	}
	m := feed(lines[0].line, 4096, 100)
	if !m.IsError || m.Result != nil || m.Cut != "result" {
		t.Errorf("long isError result kept 100 bytes: isError %v result %d bytes cut %q, want true, nil, result", m.IsError, len(m.Result), m.Cut)
	}
	m = feed(lines[2].line, 3, len(lines[2].line))
	if m.Method != "tools/call" || String(Member(m.Params, "name")) != strings.Repeat(`x"\y`, 1<<16) {
		t.Errorf("kept whole: method %q, params.name not the text", m.Method)
	}
}

func TestScannerOutcomeMembers(t *testing.T) {
	m := Peek([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"isError":true}],"resultType":"input_required","task":{"taskId":"t"}}}`))
	if m.IsError || m.ResultType != "input_required" || !m.Task {
		t.Errorf("got isError %v resultType %q task %v, want false (nested isError is not the result's), input_required, true", m.IsError, m.ResultType, m.Task)
	}
}

func TestScannerPartial(t *testing.T) {
	m := feed(`{"jsonrpc":"2.0","id":9,"result":{"a":"b`, 5, 1000)
	if m.Kind != Response || !m.Partial || m.Cut != "result" {
		t.Errorf("torn response: kind %v partial %v cut %q, want response, true, result", m.Kind, m.Partial, m.Cut)
	}
	m = feed(`{"result":{"a":"b"},"jsonrpc":"2.0","id":12`, 5, 1000)
	if m.Kind == Request || !m.Partial {
		t.Errorf("torn inside the id: kind %v partial %v, want no id and partial", m.Kind, m.Partial)
	}
}

// BenchmarkScanSmallLine is the per-line cost on the relay's small-line path.
func BenchmarkScanSmallLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
	var s Scanner
	b.ReportAllocs()
	for b.Loop() {
		s.Reset()
		s.Write(line)
		m := s.Msg(line[:len(line)-1])
		if m.Kind != Response {
			b.Fatal(m.Kind)
		}
	}
}

// BenchmarkScanHugeLine scans a 64 MiB answer whose id comes last.
func BenchmarkScanHugeLine(b *testing.B) {
	line := []byte(`{"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<20) + `"}]},"jsonrpc":"2.0","id":1}`)
	var s Scanner
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		s.Reset()
		for i := 0; i < len(line); i += 64 << 10 {
			s.Write(line[i:min(i+64<<10, len(line))])
		}
		if m := s.Msg(nil); m.Kind != Response {
			b.Fatal(m.Kind)
		}
	}
}

func TestScannerBatchWithNewline(t *testing.T) {
	line := `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`
	var s Scanner
	s.Write([]byte(line + "\n")) // as the relay feeds it: the newline too
	if m := s.Msg([]byte(line)); m.Kind != Batch || m.Partial || len(m.Batch) != 2 {
		t.Errorf("batch: kind %v partial %v elements %d, want a complete batch of 2", m.Kind, m.Partial, len(m.Batch))
	}
}

func TestScannerEscapedMemberName(t *testing.T) {
	line := `{"jsonrpc":"2.0","\u0069d":4,"result":{"\u0069sError":true}}`
	for _, n := range []int{1, 3, len(line)} {
		if m := feed(line, n, len(line)); m.Kind != Response || m.ID != mustID(t, "4") || !m.IsError {
			t.Errorf("chunks of %d: kind %v id %v isError %v, want response 4 with isError", n, m.Kind, m.ID, m.IsError)
		}
	}
}

func mustID(t *testing.T, raw string) ID {
	id, ok := ParseID([]byte(raw))
	if !ok {
		t.Fatalf("ParseID(%s)", raw)
	}
	return id
}

// FuzzScannerChunks: however a line is cut into chunks, the scanner learns
// the same about it.
func FuzzScannerChunks(f *testing.F) {
	f.Add([]byte(`{"result":{"content":[{"text":"a\"b\\"}],"isError":true},"jsonrpc":"2.0","id":"\u00e9"}`), uint8(3))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1e0,"method":"tools/call","params":{"name":"x","task":{}}}`), uint8(1))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"}]`), uint8(2))
	f.Fuzz(func(t *testing.T, line []byte, n uint8) {
		whole := Peek(line)
		size := int(n%17) + 1
		var s Scanner
		for i := 0; i < len(line); i += size {
			s.Write(line[i:min(i+size, len(line))])
		}
		got := s.Msg(line)
		if got.Kind != whole.Kind || got.ID != whole.ID || got.Method != whole.Method || got.Partial != whole.Partial ||
			got.IsError != whole.IsError || got.ResultType != whole.ResultType || got.Task != whole.Task {
			t.Fatalf("chunks of %d: %+v, whole: %+v", size, got, whole)
		}
	})
}
