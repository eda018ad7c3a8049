package phases

import (
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

// Recorder is the hand-off between the relay and the ledger: the relay puts
// observations on a bounded queue and never waits; one goroutine runs the
// Tracker and writes the Ledger. What does not fit is counted, and the count
// is written as records_lost (forward first, record second).
type Recorder struct {
	ledger  *ledger.Ledger
	tracker *Tracker
	notices io.Writer

	queue    chan item
	maxBytes int64
	queued   atomic.Int64  // bytes of line data waiting in the queue
	dropped  atomic.Uint64 // observations that did not fit
	done     chan struct{}
	close    sync.Once
	mu       sync.Mutex // guards closed against late senders
	closed   bool

	folded   map[foldKey]int // notifications counted since foldedAt, not recorded one by one
	foldedAt time.Time
}

// Folded are the notifications that come in floods and change nothing the
// ledger tracks: they are counted per direction and method, and the counts
// written every foldEvery (and when the run ends), instead of a record each.
var Folded = map[string]bool{"notifications/progress": true, "notifications/message": true}

const foldEvery = time.Second

type foldKey struct {
	dir    Dir
	method string
}

type item struct {
	dir    Dir
	line   jsonrpc.Line
	fold   string    // the method of a folded notification: counted, its line not kept
	at     time.Time // when it was relayed
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
	r := &Recorder{ledger: l, tracker: t, queue: make(chan item, opts.Queue), maxBytes: opts.MaxBytes, done: make(chan struct{}), notices: opts.Notices,
		folded: map[foldKey]int{}}
	go r.loop()
	return r
}

// Line hands over one relayed line. It never blocks; ownership of l.Data
// passes to the recorder.
func (r *Recorder) Line(dir Dir, l *jsonrpc.Line) {
	if foldable(l) {
		// Only the method and the time travel: a flood of notifications
		// holds no line data in the queue (it held up to 17 MiB).
		if !r.send(item{dir: dir, fold: l.Msg.Method, at: l.End}) {
			r.dropped.Add(1)
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
func (r *Recorder) Emit(rec ledger.Record) {
	if !r.send(item{rec: &rec}) {
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
	if !r.send(item{notice: line}) {
		io.WriteString(r.notices, line)
	}
}

func (r *Recorder) send(it item) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	select {
	case r.queue <- it:
		return true
	default:
		return false
	}
}

// Dropped is how many observations did not fit in the queue.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Close drains the queue, writes the lost count and closes the ledger.
func (r *Recorder) Close() error {
	r.close.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.queue)
		r.mu.Unlock()
	})
	<-r.done
	return r.ledger.Close()
}

// While traffic flows the recorder polls its queue every pollEvery instead
// of being woken for each line: a wake-up per line put the recorder on the
// other core at the moment the relay's next answer needed it. After
// idleAfter without traffic it blocks, so an idle shim costs nothing.
const (
	pollEvery = 2 * time.Millisecond
	idleAfter = 250 * time.Millisecond
)

func (r *Recorder) loop() {
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
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
					r.fold(time.Now(), true)
					return
				}
			default:
				break drain
			}
		}
		now := time.Now()
		if d, ok := r.tracker.Deadline(); ok && !now.Before(d) {
			r.write(r.tracker.Expire(now))
		}
		r.fold(now, time.Since(lastWork) >= idleAfter)
		r.ledger.Flush()
		if time.Since(lastWork) < idleAfter {
			time.Sleep(pollEvery)
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
				r.fold(time.Now(), true)
				return
			}
		case now := <-timer.C:
			r.write(r.tracker.Expire(now))
		}
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
	if len(r.folded) == 0 || !now && at.Sub(r.foldedAt) < foldEvery {
		return
	}
	keys := make([]foldKey, 0, len(r.folded))
	for k := range r.folded {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].dir < keys[j].dir || keys[i].dir == keys[j].dir && keys[i].method < keys[j].method
	})
	for _, k := range keys {
		r.write([]ledger.Record{{Time: at, Run: r.tracker.Run(), PID: r.tracker.PID(), Phase: Transport, Event: NotificationsFolded,
			Fields: []ledger.Field{ledger.F("direction", k.dir.String()), ledger.F("method", k.method), ledger.F("count", r.folded[k]), ledger.F("window_ms", at.Sub(r.foldedAt))}}})
	}
	clear(r.folded)
}

// foldable reports whether a line is a whole notification that is counted, not recorded.
func foldable(l *jsonrpc.Line) bool {
	return l.Msg.Kind == mcp.Notification && !l.Msg.Partial && l.Forwarded && !l.Unterminated && Folded[l.Msg.Method]
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
		case Spawned, Connected:
			r.fold(rec.Time, true)
			r.tracker.Begin(rec.Run, rec.PID, rec.Time)
		case Exited, Disconnected:
			r.fold(rec.Time, true)
			rec.Fields = append(rec.Fields, ledger.F("last_event", r.tracker.LastEvent()), ledger.F("handshake", r.tracker.HandshakeDone()))
			if lost := r.tracker.Stop(); len(lost) > 0 {
				rec.Fields = append(rec.Fields, ledger.F("tasks_lost", lost)) // a restarted server does not know them
			}
		case ExternalAttempt:
			if rec.Run == "" { // the egress witness does not know runs: the tracker does
				rec.Run, rec.PID = r.tracker.Run(), r.tracker.PID()
				rec.Fields = append(rec.Fields, r.tracker.Context()...)
			}
		case ExternalResult, ExternalDenied:
			if rec.Run == "" {
				rec.Run, rec.PID = r.tracker.Run(), r.tracker.PID()
			}
		case HandshakeReplayed:
			r.tracker.Replayed()
		case KillRequested:
			rec.Fields = append(rec.Fields, ledger.F("last_event", r.tracker.LastEvent()))
		}
		r.write([]ledger.Record{*rec})
	case it.fold != "":
		k := foldKey{it.dir, it.fold}
		if len(r.folded) == 0 {
			r.foldedAt = it.at
		}
		r.folded[k]++
	default:
		r.queued.Add(-int64(len(it.line.Data)))
		r.write(r.tracker.Observe(it.dir, &it.line))
	}
}

func (r *Recorder) write(recs []ledger.Record) {
	for i := range recs {
		r.ledger.Write(&recs[i])
	}
}
