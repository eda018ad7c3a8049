package supervisor

import (
	"bytes"
	"io"
	"sync"
)

// switchWriter is the current child's stdin. It changes child only between
// lines: when the child changes (or dies) in the middle of a line, the rest of
// that line is dropped — its start went elsewhere — and the line is marked cut
// so that Route answers it. Writes to a dead child are dropped silently: the
// requests in them are answered when the child's exit is handled, never
// re-sent.
//
// Write holds the lock while it writes, so set waits for a write in
// progress: a child that does not read blocks both. That wait ends when
// the child reads, or when its stdin is closed: by the ladder, or by proc
// once the child is reaped — a grandchild holding the pipe without reading
// cannot keep the loop from handling the exit.
type switchWriter struct {
	mu   sync.Mutex
	w    io.Writer
	mid  bool // the last byte written (or dropped) did not end a line
	skip bool // drop bytes up to the end of the current line
	cut  bool // a line was cut since the last takeCut
}

func (sw *switchWriter) set(w io.Writer) {
	sw.mu.Lock()
	if sw.mid {
		sw.skip, sw.cut = true, true
	}
	sw.w = w
	sw.mu.Unlock()
}

// takeCut reports whether a line was cut since the last call.
func (sw *switchWriter) takeCut() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	cut := sw.cut
	sw.cut = false
	return cut
}

func (sw *switchWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	n := len(p)
	if sw.skip {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return n, nil
		}
		p, sw.skip, sw.mid = p[i+1:], false, false
	}
	if len(p) == 0 {
		return n, nil
	}
	sw.mid = p[len(p)-1] != '\n'
	if sw.w != nil {
		if _, err := sw.w.Write(p); err != nil {
			sw.w = nil // the child is gone; set installs the next one
			if sw.mid {
				sw.skip, sw.cut = true, true
			}
		}
	}
	return n, nil
}
