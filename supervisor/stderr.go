package supervisor

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/mcpshim-dev/mcpshim/phases"
)

// TailLines is how many stderr lines a run keeps for its exited event.
const TailLines = 20

const maxTailLine = 512

// Tail keeps the last TailLines lines of a child's stderr, redacted.
type Tail struct {
	mu    sync.Mutex
	lines []string
	cause causeFinder // sees every line, also those the tail dropped
}

func (t *Tail) add(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 {
		return
	}
	s := phases.Preview(line, maxTailLine)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cause.add(s)
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

// Cause is the line that states the child's error (see ChooseCause).
func (t *Tail) Cause() (line string, stated bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause.cause()
}

// Last is the last kept line, or "".
func (t *Tail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}

// forwardStderr copies the child's stderr to dst whole line by whole line (one
// Write per line, so it is never spliced into one of the shim's event lines),
// keeps the tail, and hands each line to onLine. Long lines are written in
// pieces of the reader's size; the tail keeps their start. It returns at EOF.
func forwardStderr(src io.Reader, dst io.Writer, tail *Tail, onLine func([]byte)) {
	br := bufio.NewReaderSize(src, 64<<10)
	var start []byte // the beginning of a line longer than the buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if err != nil && err != bufio.ErrBufferFull && chunk[len(chunk)-1] != '\n' {
				// The child died mid-line: end it in the same Write, so the
				// next writer starts clean.
				dst.Write(append(append([]byte(nil), chunk...), '\n'))
			} else {
				dst.Write(chunk)
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
