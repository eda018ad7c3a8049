package proc

import (
	"bufio"
	"bytes"
	"fmt"
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
//
// The log never makes the shim wait on its reader: one goroutine writes to
// the client's stderr, and Write only queues. A client that does not read
// its stderr loses the shim's lines past maxQueued (counted; once stderr
// drains, a line says how many), never a ledger record; the server's own
// lines wait for room, as they would on the client's pipe without the shim.
type Log struct {
	mu       sync.Mutex
	ready    sync.Cond // queue has bytes, or the log closed
	room     sync.Cond // the writer took the queue, or the log closed
	w        io.Writer
	open     bool   // a server line is partly queued
	deferred []byte // the shim's lines waiting for it to end
	idle     *time.Timer
	queue    []byte // for the writer, in order
	writing  bool   // the writer is in a Write
	dropped  int    // the shim's lines left out since the last notice
	closed   bool
	done     chan struct{} // the writer returned
}

const (
	logIdle     = 5 * time.Second
	maxDeferred = 1 << 20
	// maxQueued is how much of the shim's lines wait for a client that
	// does not read its stderr before the next ones are dropped.
	maxQueued = 4 << 20 // more than maxDeferred: the lines a long server line held go out whole
)

// NewLog returns a Log writing to w, and starts its writer: Close ends it.
func NewLog(w io.Writer) *Log {
	l := &Log{w: w, done: make(chan struct{})}
	l.ready.L, l.room.L = &l.mu, &l.mu
	// idleLine runs on a goroutine of its own each time the timer fires, and
	// returns once it has ended the open line.
	l.idle = time.AfterFunc(time.Hour, l.idleLine)
	l.idle.Stop()
	go l.run()
	return l
}

// Write queues p, whole lines of the shim's own, to be written at once or
// right after the server's line being written. It never blocks on the
// client: lines that do not fit are dropped and counted.
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
	l.put(p, false)
	return len(p), nil
}

// put queues the shim's lines p, or counts them dropped when the queue is
// full (force: a notice of the log's own, queued whatever the room); l.mu
// is held.
func (l *Log) put(p []byte, force bool) {
	if !force && (l.closed || len(l.queue)+len(p) > maxQueued) {
		l.dropped += max(bytes.Count(p, []byte("\n")), 1)
		return
	}
	l.queue = append(l.queue, p...)
	l.ready.Signal()
}

// server queues a piece of the child's stderr, waiting for room (the
// server's stderr is backpressure, never loss, until the log closes); ends
// says it ends a line.
func (l *Log) server(p []byte, ends bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) > 0 && len(l.queue)+len(p) > maxQueued && !l.closed {
		l.room.Wait()
	}
	if l.closed {
		return
	}
	l.queue = append(l.queue, p...)
	l.ready.Signal()
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
	l.put([]byte("\n"), true) // the server's line began: it ends whole
	l.open = false
	l.flushDeferred()
}

func (l *Log) flushDeferred() {
	if len(l.deferred) > 0 {
		l.put(l.deferred, false)
		l.deferred = l.deferred[:0]
		if cap(l.deferred) > 64<<10 {
			l.deferred = nil
		}
	}
}

// run is the writer: it writes what is queued until the log is closed and
// the queue written. A Write to a client that does not read blocks it, not
// the shim.
func (l *Log) run() {
	defer close(l.done)
	var batch []byte
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for len(l.queue) == 0 && !l.closed {
			l.ready.Wait()
		}
		if len(l.queue) == 0 {
			return // closed, and all written
		}
		batch, l.queue = l.queue, batch[:0]
		l.writing = true
		l.room.Broadcast()
		l.mu.Unlock()
		_, err := l.w.Write(batch)
		l.mu.Lock()
		l.writing = false
		l.room.Broadcast()
		if err == nil && l.dropped > 0 {
			note := fmt.Sprintf("mcpshim: %d line(s) of the shim's own were dropped: the client did not read stderr in time (the ledger has every record)\n", l.dropped)
			l.dropped = 0
			if l.open {
				l.deferred = append(l.deferred, note...)
			} else {
				l.put([]byte(note), true)
			}
		}
	}
}

// Close writes what is queued, waiting at most bound for a client that does
// not read its stderr, and reports whether it all went out. Lines written
// after it are dropped.
func (l *Log) Close(bound time.Duration) bool {
	l.mu.Lock()
	if l.open {
		l.endLine()
	}
	l.closed = true
	l.idle.Stop()
	l.ready.Broadcast()
	l.room.Broadcast()
	l.mu.Unlock()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-l.done:
		return true
	case <-t.C:
		return false
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
