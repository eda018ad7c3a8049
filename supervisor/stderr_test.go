package supervisor

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestLogKeepsServerLinesWhole: the shim's lines written while a long
// server stderr line is half written follow that line; past maxDeferred the
// line is ended first.
func TestLogKeepsServerLinesWhole(t *testing.T) {
	var out bytes.Buffer
	lg := NewLog(&out)
	lg.server([]byte("aaaa"), false)
	lg.Write([]byte("shim 1\n"))
	lg.server([]byte("bbbb\n"), true)
	lg.Write([]byte("shim 2\n"))
	if want := "aaaabbbb\nshim 1\nshim 2\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}

	out.Reset()
	lg.server([]byte("cccc"), false)
	big := strings.Repeat("s", maxDeferred) + "\n"
	lg.Write([]byte(big[:10] + "\n"))
	lg.Write([]byte(big))
	lg.server([]byte("dddd\n"), true)
	if want := "cccc\n" + big[:10] + "\n" + big + "dddd\n"; out.String() != want {
		t.Errorf("past maxDeferred: got %d bytes starting %q, want the server line ended before the shim's", out.Len(), out.String()[:20])
	}
}

// TestForwardStderrEndsATornLine: a child that died in the middle of a long
// stderr line has it ended, and the shim's waiting lines follow.
func TestForwardStderrEndsATornLine(t *testing.T) {
	var out bytes.Buffer
	lg := NewLog(&out)
	long := strings.Repeat("x", 64<<10) // exactly the reader's buffer: the line is still open at EOF
	r := &eofReader{data: []byte(long), onRead: func() { lg.Write([]byte("shim\n")) }}
	forwardStderr(r, lg, &Tail{}, nil)
	if want := long + "\nshim\n"; out.String() != want {
		t.Errorf("got %d bytes ending %q, want the line, a newline, then the shim's", out.Len(), out.String()[max(0, out.Len()-10):])
	}
}

// eofReader hands over data, then calls onRead as it returns EOF.
type eofReader struct {
	data   []byte
	onRead func()
}

func (r *eofReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.onRead != nil {
			r.onRead()
			r.onRead = nil
		}
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}
