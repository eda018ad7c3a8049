package tap

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// Recorder is the hand-off between the relay and the ledger: the relay puts
// observations on a bounded queue and never waits; one goroutine runs the
// Tracker and writes the Ledger. What does not fit is counted, and the count
// is written as records_lost (forward first, record second).
type Recorder struct {
	ledger  *ledger.Ledger
	tracker *Tracker
	notices io.Writer
	tell    func(*ledger.Record) string

	queue    chan item
	wake     chan struct{} // the queue is half full: poll now
	maxBytes int64
	queued   atomic.Int64  // bytes of line data waiting in the queue
	dropped  atomic.Uint64 // observations that did not fit
	done     chan struct{}
	close    sync.Once
	mu       sync.Mutex // guards closed against late senders, and kept
	closed   bool
	// kept are the records and notices that did not fit in the queue:
	// lifecycle records and notices are never dropped for observations.
	// Once it holds one, every item goes here until the loop takes them,
	// so the order stays.
	kept []item

	// The folded notifications, counted by the relay's goroutines as they
	// pass: a flood never reaches the queue.
	folds [2][len(Folded)]foldCount
}

// Folded are the notifications that come in floods and change nothing the
// ledger tracks: they are counted per direction and method, and the counts
// written every foldEvery (and when the run ends), instead of a record each.
var Folded = [...]string{mcp.NotificationLoggingMessage, mcp.NotificationProgress}

const foldEvery = time.Second

// foldCount is one direction and method's notifications since its last
// record, and when the first of them was relayed. One lock keeps the two
// together: as two atomics, a relay's notification could be counted after
// the recorder had taken the count and cleared its time, and the next
// record's window ran from 1970. Uncontended (the recorder takes it once a
// poll), it costs what the two atomics did.
type foldCount struct {
	mu    sync.Mutex
	n     int64
	first int64 // unix ns; valid while n > 0
}

type item struct {
	dir    phases.Dir
	line   Observation
	rec    *ledger.Record
	notice string // a line for the person reading the log
}

// RecorderOptions sizes the queue.
type RecorderOptions struct {
	Queue    int   // items; default 4096
	MaxBytes int64 // line bytes waiting; default 32 MiB
	// Notices receives the lines given to Say, in order with the event lines
	// (even with --quiet: they are few and they matter).
	Notices io.Writer
	// Tell, when set, sees every record after it was written and may return
	// a line for Notices, printed after it (the verdict of a run that ended).
	Tell func(*ledger.Record) string
}

// NewRecorder starts the recorder's goroutine. It exits when Close is called
// and the queue is drained.
func NewRecorder(l *ledger.Ledger, t *Tracker, opts RecorderOptions) *Recorder {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 32 << 20
	}
	r := &Recorder{ledger: l, tracker: t, queue: make(chan item, opts.Queue), wake: make(chan struct{}, 1), maxBytes: opts.MaxBytes, done: make(chan struct{}), notices: opts.Notices, tell: opts.Tell}
	// The writer: returns once Close has closed the queue and what it held is
	// written; Close waits for it.
	go r.loop()
	return r
}

// Line hands over one relayed line. It never blocks; ownership of l.Data
// passes to the recorder.
func (r *Recorder) Line(dir phases.Dir, l *Observation) {
	if i := foldIndex(&l.Msg, l.Unterminated); i >= 0 {
		// Counted here, never queued: a flood of 1 KiB notifications once
		// held 17 MiB of lines in the queue, and lost some when it was full.
		c := &r.folds[dir][i]
		c.mu.Lock()
		c.n++
		first := c.n == 1
		if first {
			c.first = l.End.UnixNano()
		}
		c.mu.Unlock()
		if first {
			r.poke() // an idle recorder writes the count in time
		}
		return
	}
	n := int64(len(l.Data))
	if r.queued.Add(n) > r.maxBytes {
		r.queued.Add(-n)
		r.dropped.Add(1)
		return
	}
	if !r.send(item{dir: dir, line: *l}) {
		r.queued.Add(-n)
		r.dropped.Add(1)
	}
}

// Emit hands over a record made by the supervisor (launch, interruption,
// supervision events). It never blocks. Records for Spawned start a new run
// in the tracker; Exited and KillRequested records get last_event added.
//
// A record is never dropped for a full queue: the session's lifecycle
// (spawned, exited, signals, restarts, client_disconnected) must reach the
// ledger whatever the observations do. Only a record after Close is lost,
// and counted.
func (r *Recorder) Emit(rec ledger.Record) {
	if !r.keep(item{rec: &rec}) {
		r.dropped.Add(1)
	}
}

// Say prints a line for the person reading the client's log after the events
// handed over before it. When the queue is full it prints at once: a notice
// is never lost.
func (r *Recorder) Say(line string) {
	if r.notices == nil {
		return
	}
	if !r.keep(item{notice: line}) {
		io.WriteString(r.notices, line) // after Close: the log queues it
	}
}

// keep queues it, or keeps it aside when the queue is full; false after
// Close.
func (r *Recorder) keep(it item) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if len(r.kept) == 0 {
		select {
		case r.queue <- it:
			return true
		default:
		}
	}
	if len(r.kept) >= maxKept {
		return false // a flood of server-reported events, not the lifecycle
	}
	r.kept = append(r.kept, it)
	r.poke()
	return true
}

// maxKept bounds what keep sets aside: the lifecycle is a few records per
// run, the rest (server-reported events, egress) may be many.
const maxKept = 1 << 16

// takeKept returns what keep set aside, in order.
func (r *Recorder) takeKept() []item {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.kept
	r.kept = nil
	return kept
}

func (r *Recorder) send(it item) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if len(r.kept) > 0 { // after what was kept aside, within maxBytes and maxKept
		if len(r.kept) >= maxKept {
			return false
		}
		r.kept = append(r.kept, it)
		return true
	}
	select {
	case r.queue <- it:
	default:
		return false
	}
	if len(r.queue) >= cap(r.queue)/2 {
		r.poke()
	}
	return true
}

// poke wakes the recorder's loop if it waits.
func (r *Recorder) poke() {
	select {
	case r.wake <- struct{}{}:
	default: // already woken
	}
}

// Dropped is how many observations did not fit in the queue.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// CloseBound is how long Close waits for the queue to be written (a queue
// of many-MiB lines takes seconds to observe under load): the
// ledger's file is written by then unless its disk stalls, and the shim
// does not wait on a stalled disk to exit.
const CloseBound = 30 * time.Second

// Close drains the queue, writes the lost count and closes the ledger,
// waiting at most CloseBound for the writer.
func (r *Recorder) Close() error {
	r.close.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.queue)
		r.mu.Unlock()
	})
	t := time.NewTimer(CloseBound)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		return fmt.Errorf("ledger: still writing after %v; the records not yet written are lost", CloseBound)
	}
	return r.ledger.Close()
}

// While traffic flows the recorder polls its queue every pollEvery instead
// of being woken for each line: a wake-up per line put the recorder on the
// other core at the moment the relay's next answer needed it, and so did a
// poll every 2 ms (small round trips: p99 4.5x a bare pipe's at 2 ms, 1.5-2.4x
// at 10 ms; p50 1.3x and 1.1-1.2x). A queue half full wakes it at once, so a
// fast producer never waits a whole poll for room. After idleAfter without
// traffic it blocks, so an idle shim costs nothing.
const (
	pollEvery = 10 * time.Millisecond
	idleAfter = 250 * time.Millisecond
)

func (r *Recorder) loop() {
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	poll := time.NewTimer(time.Hour)
	poll.Stop()
	var reported uint64
	lastWork := time.Now()
	// take handles one item; it reports false once the queue is closed.
	take := func(it item, ok bool) bool {
		r.account(&reported)
		if !ok {
			return false
		}
		r.handle(it)
		lastWork = time.Now()
		return true
	}
	defer r.ledger.Flush()
	for {
		// Everything queued so far, without blocking, written at once.
		r.ledger.Hold()
	drain:
		for {
			select {
			case it, ok := <-r.queue:
				if !take(it, ok) {
					r.takeAllKept(take)
					r.fold(time.Now(), true)
					return
				}
			default:
				// The queue is empty: what was kept aside comes after it.
				kept := r.takeKept()
				if len(kept) == 0 {
					break drain
				}
				for _, it := range kept {
					take(it, true)
				}
			}
		}
		now := time.Now()
		if r.folding() {
			lastWork = now
		}
		if d, ok := r.tracker.Deadline(); ok && !now.Before(d) {
			r.write(r.tracker.Expire(now))
		}
		r.fold(now, time.Since(lastWork) >= idleAfter)
		r.ledger.Flush()
		if time.Since(lastWork) < idleAfter {
			poll.Reset(pollEvery)
			select {
			case <-poll.C:
			case <-r.wake:
				poll.Stop()
			}
			continue
		}
		// Idle: block until a line arrives or the handshake deadline passes.
		if d, ok := r.tracker.Deadline(); ok {
			timer.Reset(time.Until(d))
		}
		select {
		case it, ok := <-r.queue:
			timer.Stop()
			if !take(it, ok) {
				r.takeAllKept(take)
				r.fold(time.Now(), true)
				return
			}
		case now := <-timer.C:
			r.write(r.tracker.Expire(now))
		case <-r.wake:
			timer.Stop()
			lastWork = time.Now()
		}
	}
}

// takeAllKept handles what keep set aside once the queue is closed and
// drained.
func (r *Recorder) takeAllKept(take func(item, bool) bool) {
	for _, it := range r.takeKept() {
		take(it, true)
	}
}

// account moves newly dropped observations into the ledger's lost count.
func (r *Recorder) account(reported *uint64) {
	if d := r.dropped.Load(); d > *reported {
		r.ledger.Skip(d - *reported)
		*reported = d
	}
}

// fold writes the notification counts when foldEvery has passed since the
// first, or at once with now set (the run ends, the recorder idles or stops).
func (r *Recorder) fold(at time.Time, now bool) {
	for dir := range r.folds {
		for i := range r.folds[dir] {
			c := &r.folds[dir][i]
			c.mu.Lock()
			n, first := c.n, c.first
			if n == 0 || !now && at.UnixNano()-first < int64(foldEvery) {
				c.mu.Unlock()
				continue
			}
			c.n = 0
			c.mu.Unlock()
			window := time.Duration(max(at.UnixNano()-first, 0))
			r.write([]ledger.Record{{Time: at, Run: r.tracker.Run(), PID: r.tracker.PID(), Phase: phases.Transport, Event: phases.NotificationsFolded,
				Fields: []ledger.Field{ledger.F(phases.FieldDirection, phases.Dir(dir).String()), ledger.F(phases.FieldMethod, Folded[i]), ledger.F(phases.FieldCount, n), ledger.F("window_ms", window)}}})
		}
	}
}

// folding reports whether notifications wait to be counted in a record.
func (r *Recorder) folding() bool {
	for dir := range r.folds {
		for i := range r.folds[dir] {
			c := &r.folds[dir][i]
			c.mu.Lock()
			n := c.n
			c.mu.Unlock()
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// Kept reports whether Line keeps the data of a whole line holding m (a
// relay may then skip copying it): a folded notification is only counted.
func (r *Recorder) Kept(m *mcp.Msg) bool { return foldIndex(m, false) < 0 }

// foldIndex is the index in Folded of a whole notification that is counted,
// not recorded; -1 for any other line. Whether it was forwarded does not
// count: Kept is asked before the line is routed.
func foldIndex(m *mcp.Msg, unterminated bool) int {
	if m.Kind != mcp.Notification || m.Partial || unterminated {
		return -1
	}
	for i, name := range Folded {
		if m.Method == name {
			return i
		}
	}
	return -1
}

func (r *Recorder) handle(it item) {
	switch {
	case it.notice != "":
		r.ledger.Flush() // after the events before it
		io.WriteString(r.notices, it.notice)
		r.ledger.Hold()
	case it.rec != nil:
		rec := it.rec
		switch rec.Event {
		case phases.Spawned, phases.Connected:
			r.fold(rec.Time, true)
			r.tracker.Begin(rec.Run, rec.PID, rec.Time, rec.Event)
		case phases.Exited, phases.Disconnected:
			r.fold(rec.Time, true)
			rec.Fields = append(rec.Fields, ledger.F(phases.FieldLastEvent, r.tracker.LastEvent()), ledger.F(phases.FieldHandshake, r.tracker.HandshakeDone()))
			if lost := r.tracker.Stop(); len(lost) > 0 {
				rec.Fields = append(rec.Fields, ledger.F("tasks_lost", lost)) // a restarted server does not know them
			}
		case phases.ExternalAttempt:
			if rec.Run == "" { // the egress witness does not know runs: the tracker does
				rec.Run, rec.PID = r.tracker.Run(), r.tracker.PID()
				rec.Fields = append(rec.Fields, r.tracker.Context()...)
			}
		case phases.ExternalResult, phases.ExternalDenied:
			if rec.Run == "" {
				rec.Run, rec.PID = r.tracker.Run(), r.tracker.PID()
			}
		case phases.HandshakeReplayed:
			r.tracker.Replayed()
		case phases.KillRequested:
			rec.Fields = append(rec.Fields, ledger.F(phases.FieldLastEvent, r.tracker.LastEvent()))
		}
		r.write([]ledger.Record{*rec})
	default:
		r.queued.Add(-int64(len(it.line.Data)))
		recs := r.tracker.Observe(it.dir, &it.line)
		r.write(recs)
		r.tracker.Recorded(recs)
		if seq := r.tracker.Answered(); seq != 0 {
			r.ledger.Unprint(seq) // answered before the poll's write: one line, the answer's
		}
	}
}

func (r *Recorder) write(recs []ledger.Record) {
	for i := range recs {
		r.ledger.Write(&recs[i])
		if r.tell == nil || r.notices == nil {
			continue
		}
		if line := r.tell(&recs[i]); line != "" {
			r.ledger.Flush() // after the event lines before it
			io.WriteString(r.notices, line)
			r.ledger.Hold()
		}
	}
}
