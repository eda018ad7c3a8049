package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Progress is a probe's live line on a terminal: done / total and who is
// pending, redrawn every quarter second until Stop.
type Progress struct {
	w       io.Writer
	cols    int // the terminal's width: the line stays within it, or it wraps and its row is never cleared
	total   int
	pending []string
	mu      sync.Mutex
	stop    chan struct{}
	stopped chan struct{}
}

// NewProgress starts drawing the progress of probing names on w, a
// terminal cols wide (0: unknown).
func NewProgress(w io.Writer, cols int, names []string) *Progress {
	p := &Progress{w: w, cols: cols, total: len(names), pending: names, stop: make(chan struct{}), stopped: make(chan struct{})}
	go p.tick() // exits at Stop
	return p
}

// tick redraws every quarter second, so the elapsed time moves while servers are silent.
func (p *Progress) tick() {
	defer close(p.stopped)
	start := time.Now()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		p.draw(time.Since(start))
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

func (p *Progress) draw(elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	head := fmt.Sprintf("probing %d/%d done, %.1fs; pending: ", p.total-len(p.pending), p.total, elapsed.Seconds())
	// One column short of the width: a line that fills the last column
	// leaves the cursor past it, and the next \r returns to the row below.
	room := 60
	if p.cols > 0 {
		room = p.cols - 1 - len(head)
	}
	waiting := []rune(termsafe.String(strings.Join(p.pending, ", ")))
	switch {
	case room < 2:
		waiting = nil
		head = strings.TrimSuffix(head, "; pending: ")
	case len(waiting) > room:
		waiting = append(waiting[:room-1], '…')
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s%s", head, string(waiting))
}

// Done takes r's server off the pending.
func (p *Progress) Done(r probe.Result) {
	p.mu.Lock()
	if i := slices.Index(p.pending, r.Server); i >= 0 {
		p.pending = slices.Delete(p.pending, i, i+1)
	}
	p.mu.Unlock()
}

// Stop ends the redrawing and clears the line.
func (p *Progress) Stop() {
	close(p.stop)
	<-p.stopped
	fmt.Fprint(p.w, "\r\x1b[K")
}
