package tap

import (
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestFoldWindowNeverFromZero: the relay counts folded notifications while
// the recorder writes and resets the counts. However the two interleave, a
// count is written with the time of a notification it counted, never with
// none: a first time of 0 once made window_ms count from 1970 (the relay's
// CompareAndSwap of first failed before the reset, its Add landed after).
// Each count is also written once: the totals add up.
func TestFoldWindowNeverFromZero(t *testing.T) {
	// The recorder keeps the first time as Unix nanoseconds, so windows are
	// wall-clock differences: compare them with the wall clock (Round(0)
	// drops the monotonic reading; under wine the two clocks differ by tens
	// of milliseconds).
	start := time.Now().Round(0)
	var (
		mu      sync.Mutex
		counted int64
		bad     []time.Duration
	)
	l, _ := ledger.Open(ledger.Options{OnRecord: func(r *ledger.Record) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range r.Fields {
			switch f.Key {
			case "count":
				counted += f.Value.(int64)
			case "window_ms":
				if w := f.Value.(time.Duration); w > time.Since(start) {
					bad = append(bad, w)
				}
			}
		}
	}})
	// No loop goroutine: the test is the recorder, folding as fast as it can.
	r := &Recorder{ledger: l, tracker: &Tracker{}, wake: make(chan struct{}, 1)}
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`)
	line := Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true}
	const n = 300_000
	done := make(chan struct{})
	// The relay: returns after n notifications.
	go func() {
		defer close(done)
		for range n {
			l := line
			l.End = time.Now()
			r.Line(phases.FromServer, &l)
		}
	}()
	for folding := true; folding; {
		select {
		case <-done:
			folding = false
		default:
		}
		r.fold(time.Now(), true)
	}
	r.fold(time.Now(), true)
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("%d counts written with a window longer than the test (%v): %v", len(bad), time.Since(start), bad[:min(len(bad), 5)])
	}
	if counted != n {
		t.Errorf("counted %d notifications, want %d", counted, n)
	}
}

// BenchmarkFoldedLine is the relay's cost of one folded notification.
func BenchmarkFoldedLine(b *testing.B) {
	l, _ := ledger.Open(ledger.Options{})
	r := &Recorder{ledger: l, tracker: &Tracker{}, wake: make(chan struct{}, 1)}
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`)
	line := Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true, End: time.Now()}
	for b.Loop() {
		r.Line(phases.FromServer, &line)
	}
}
