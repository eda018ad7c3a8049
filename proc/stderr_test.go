package proc

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
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
	lg.sync()
	if want := "aaaabbbb\nshim 1\nshim 2\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}

	out.Reset()
	lg.server([]byte("cccc"), false)
	big := strings.Repeat("s", maxDeferred) + "\n"
	lg.Write([]byte(big[:10] + "\n"))
	lg.Write([]byte(big))
	lg.server([]byte("dddd\n"), true)
	lg.sync()
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
	ForwardStderr(r, lg, &Tail{}, nil)
	lg.Close(time.Minute)
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

// sync waits until the writer has written what is queued.
func (l *Log) sync() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) > 0 || l.writing {
		l.room.Wait()
	}
}

// stuckWriter is a client's stderr that nobody reads: its Write blocks
// until release is closed.
type stuckWriter struct {
	release chan struct{}
	mu      sync.Mutex
	got     bytes.Buffer
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.Write(p)
}

// TestLogNeverWaitsOnItsReader: while the client does not read its
// stderr, the shim's lines are queued up to maxQueued and then dropped,
// each Write returning at once; once stderr drains, a line says how many
// were dropped. Close returns within its bound whatever the reader does.
func TestLogNeverWaitsOnItsReader(t *testing.T) {
	w := &stuckWriter{release: make(chan struct{})}
	lg := NewLog(w)
	line := []byte(strings.Repeat("e", 99) + "\n")
	const n = 2 * maxQueued / 100
	for range n {
		lg.Write(line) // never blocks: the test would hang here
	}
	if lg.Close(10 * time.Millisecond) {
		t.Fatalf("Close: got all written with stderr unread, want false after the bound")
	}
	close(w.release)
	<-lg.done
	w.mu.Lock()
	out := w.got.String()
	w.mu.Unlock()
	kept := strings.Count(out, string(line))
	dropped := n - kept
	if dropped <= 0 || kept < maxQueued/100-1 {
		t.Fatalf("got %d lines kept of %d, want about %d kept and the rest dropped", kept, n, maxQueued/100)
	}
	if want := fmt.Sprintf("mcpshim: %d line(s) of the shim's own were dropped", dropped); !strings.Contains(out, want) {
		t.Errorf("got output ending %q, want it to say %q", out[max(0, len(out)-200):], want)
	}
}
