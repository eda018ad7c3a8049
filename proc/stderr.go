package proc

import (
	"bufio"
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/cause"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// TailLines is how many stderr lines a run keeps for its exited event.
const TailLines = 20

const maxTailLine = 512

// Tail keeps the last TailLines lines of a child's stderr, redacted.
type Tail struct {
	mu    sync.Mutex
	lines []string
	cause cause.Finder // sees every line, also those the tail dropped
}

func (t *Tail) add(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 {
		return
	}
	s := redact.Preview(line, maxTailLine)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cause.Add(s)
	if len(t.lines) == TailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, s)
}

// Lines returns a copy of the kept lines, oldest first.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// Cause is the line that states the child's error (see cause.Choose).
func (t *Tail) Cause() (line string, stated bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause.Cause()
}

// Log is the client's log (the shim's stderr), shared by the child's stderr
// and the shim's own lines. Write is for the shim's lines; each is written
// whole, between the server's lines, never inside one: while a server line
// longer than the reader's buffer is being written, the shim's lines wait in
// memory and follow it. Only a server line left open for logIdle, or one
// that keeps maxDeferred bytes of the shim's lines waiting, is ended with a
// newline so that they can go out.
type Log struct {
	mu       sync.Mutex
	w        io.Writer
	open     bool   // a server line is partly written
	deferred []byte // the shim's lines waiting for it to end
	idle     *time.Timer
}

const (
	logIdle     = 5 * time.Second
	maxDeferred = 1 << 20
)

// NewLog returns a Log writing to w.
func NewLog(w io.Writer) *Log {
	l := &Log{w: w}
	// idleLine runs on a goroutine of its own each time the timer fires, and
	// returns once it has ended the open line.
	l.idle = time.AfterFunc(time.Hour, l.idleLine)
	l.idle.Stop()
	return l
}

// Write writes p, whole lines of the shim's own, at once or right after the
// server's line being written.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		if len(l.deferred)+len(p) <= maxDeferred {
			l.deferred = append(l.deferred, p...)
			return len(p), nil
		}
		l.endLine()
	}
	return l.w.Write(p)
}

// server writes a piece of the child's stderr; ends says it ends a line.
func (l *Log) server(p []byte, ends bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(p)
	if !ends {
		l.open = true
		l.idle.Reset(logIdle)
		return
	}
	l.idle.Stop()
	l.open = false
	l.flushDeferred()
}

func (l *Log) idleLine() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open && len(l.deferred) > 0 {
		l.endLine()
	}
}

// endLine ends the server's open line so that the shim's lines can go out;
// l.mu is held.
func (l *Log) endLine() {
	l.w.Write([]byte("\n"))
	l.open = false
	l.flushDeferred()
}

func (l *Log) flushDeferred() {
	if len(l.deferred) > 0 {
		l.w.Write(l.deferred)
		l.deferred = l.deferred[:0]
		if cap(l.deferred) > 64<<10 {
			l.deferred = nil
		}
	}
}

// ForwardStderr copies the child's stderr to dst line by line, keeps the
// tail, and hands each line to onLine. A line longer than the reader's
// buffer is written in pieces; when dst is a Log, the shim's own lines wait
// until it ends. It returns at EOF.
func ForwardStderr(src io.Reader, dst io.Writer, tail *Tail, onLine func([]byte)) {
	lg, _ := dst.(*Log)
	write := func(p []byte, ends bool) {
		if lg != nil {
			lg.server(p, ends)
		} else {
			dst.Write(p)
		}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	var start []byte // the beginning of a line longer than the buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) == 0 && err != nil && err != bufio.ErrBufferFull && start != nil {
			write([]byte("\n"), true) // the child died right after a full buffer of a line
		}
		if len(chunk) > 0 {
			if err != nil && err != bufio.ErrBufferFull && chunk[len(chunk)-1] != '\n' {
				// The child died mid-line: end it in the same Write, so the
				// next writer starts clean.
				write(append(append([]byte(nil), chunk...), '\n'), true)
			} else {
				write(chunk, err == nil)
			}
			if err == bufio.ErrBufferFull {
				if start == nil {
					start = append([]byte(nil), chunk[:min(len(chunk), maxTailLine)]...)
				}
				continue
			}
			line := chunk
			if start != nil {
				line, start = start, nil
			}
			tail.add(line)
			if onLine != nil {
				onLine(line)
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}
