package phases

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
)

// Recorder is the hand-off between the relay and the ledger: the relay puts
// observations on a bounded queue and never waits; one goroutine runs the
// Tracker and writes the Ledger. What does not fit is counted, and the count
// is written as records_lost (forward first, record second).
type Recorder struct {
	ledger  *Ledger
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
}

type item struct {
	dir    Dir
	line   jsonrpc.Line
	rec    *Record
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
func NewRecorder(l *Ledger, t *Tracker, opts RecorderOptions) *Recorder {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 32 << 20
	}
	r := &Recorder{ledger: l, tracker: t, queue: make(chan item, opts.Queue), maxBytes: opts.MaxBytes, done: make(chan struct{}), notices: opts.Notices}
	go r.loop()
	return r
}

// Line hands over one relayed line. It never blocks; ownership of l.Data
// passes to the recorder.
func (r *Recorder) Line(dir Dir, l *jsonrpc.Line) {
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
func (r *Recorder) Emit(rec Record) {
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
	for {
		// Everything queued so far, without blocking.
	drain:
		for {
			select {
			case it, ok := <-r.queue:
				if !take(it, ok) {
					return
				}
			default:
				break drain
			}
		}
		if d, ok := r.tracker.Deadline(); ok && !time.Now().Before(d) {
			r.write(r.tracker.Expire(time.Now()))
		}
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

func (r *Recorder) handle(it item) {
	switch {
	case it.notice != "":
		io.WriteString(r.notices, it.notice)
	case it.rec != nil:
		rec := it.rec
		switch rec.Event {
		case Spawned, Connected:
			r.tracker.Begin(rec.Run, rec.PID, rec.Time)
		case Exited, Disconnected:
			rec.Fields = append(rec.Fields, F("last_event", r.tracker.LastEvent()), F("handshake", r.tracker.HandshakeDone()))
			if lost := r.tracker.Stop(); len(lost) > 0 {
				rec.Fields = append(rec.Fields, F("tasks_lost", lost)) // a restarted server does not know them
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
			rec.Fields = append(rec.Fields, F("last_event", r.tracker.LastEvent()))
		}
		r.write([]Record{*rec})
	default:
		r.queued.Add(-int64(len(it.line.Data)))
		r.write(r.tracker.Observe(it.dir, &it.line))
	}
}

func (r *Recorder) write(recs []Record) {
	for i := range recs {
		r.ledger.Write(&recs[i])
	}
}
