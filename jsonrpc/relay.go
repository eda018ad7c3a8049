// Package jsonrpc frames line-delimited JSON-RPC 2.0 and relays it byte for
// byte. Nothing here re-encodes a message: the relay writes the bytes it read,
// and mcp.Scanner classifies each line as its chunks go by. It knows nothing
// of processes, events or the ledger: the tap hands lines to whoever listens.
package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// Line is what the relay saw of one line. It is handed to Route before its
// last bytes are written and to Observe after.
type Line struct {
	// Data holds the line without its newline, at most the relay's observation
	// limit. Observe owns it; Route must not keep it.
	Data []byte
	// Size counts every byte of the line on the wire, newline included.
	Size int64
	// Truncated is set when Data holds only the first bytes of the line.
	Truncated bool
	// Unterminated is set when the stream ended before the line's newline.
	Unterminated bool
	// Forwarded is false when Route swallowed the line.
	Forwarded bool
	// Held is set while Route runs when the whole line is still in memory,
	// unwritten: only then can Route swallow it.
	Held bool
	// Routed says Route saw the line. A line the stream ended in the middle
	// of is routed too (Unterminated, Msg.Partial), so the client's last bytes
	// can wait for a child like any line; with ParkTorn a torn one that is not
	// a complete JSON value is parked instead.
	Routed bool
	// Msg is what the line is: classified by the scanner from every byte of
	// the line, whatever Data kept of it.
	Msg mcp.Msg
	// End is when the line's last bytes were read; the lines one read
	// brought share one reading of the clock.
	End time.Time
}

// Relay copies Src to Dst line by line, byte for byte: every byte read is
// written, in order, including CRLF, NUL bytes, invalid UTF-8 and a last line
// without a newline. Memory is bounded by MaxObserve whatever the line length.
//
// Whole lines that one read brought are written together, in one write, but a
// line is never held back waiting for what follows it: the batch goes out as
// soon as the reader has no further complete line buffered.
type Relay struct {
	Src io.Reader
	Dst *Wire
	// MaxObserve bounds the bytes of one line kept for Route and Observe.
	MaxObserve int
	// Hold is how many bytes of a line are kept back until the line is
	// complete, so that Route can still swallow it. Longer lines are streamed
	// as they arrive and Route can no longer swallow them. At most MaxObserve.
	Hold int
	// Route, when set, sees each line before its final bytes are written and
	// returns false to swallow a line that was held whole. It runs on the relay
	// goroutine and must be quick.
	Route func(*Line) bool
	// Keep, when set, is asked once per line that outgrows Hold, with the
	// held prefix, whether the rest is worth observing up to MaxObserve. When
	// it says no, the line is observed up to Hold only: memory goes to the
	// lines the tap needs whole (a tools/list answer), not to every long
	// tool result.
	Keep func(prefix []byte) bool
	// Ready, when set, is called before the first bytes of a line too long to
	// hold are written: the place to wait until the destination can take it.
	Ready func()
	// Observe, when set, gets each line after it was written. It must not
	// block: it is the hand-off to the recorder.
	Observe func(*Line)
	// Kept, when set, is asked of each small whole line (its Msg known)
	// whether Route or Observe keeps its Data past the call. When it says
	// no, Data and Msg's slices are the reader's buffer, valid only until
	// Observe returns: a flood of notifications that are only counted costs
	// no copy. Nil keeps every line.
	Kept func(*Line) bool
	// Progress counts the bytes read so far; it may be read while Run runs.
	Progress atomic.Int64
	// ParkTorn parks a line the stream ended in the middle of, when it was
	// still held whole and is not a complete JSON value (the half of a
	// message a dying server wrote), in the Wire instead of writing it: the
	// Wire drops it when something else must be written after it — a client
	// reading with a streaming JSON decoder (the Go SDK) cannot recover from
	// half an object, whatever follows — and delivers it at Flush otherwise.
	// Longer lines were already streamed; they are ended with a newline
	// before anything else is written (see Wire).
	ParkTorn bool
}

// DefaultMaxObserve is how much of one line the tap looks at by default.
const DefaultMaxObserve = 16 << 20

const readSize = 64 << 10

// slabSize is how much memory the relay takes at once for the copies of small
// lines it hands to Observe: one allocation per slab, not per line.
const slabSize = 64 << 10

// ErrWrite wraps a failure to write to the destination (the peer is gone).
var ErrWrite = errors.New("write")

// Run relays until Src ends. It returns nil at EOF, an error wrapping
// ErrWrite when Dst fails, or the read error.
func (r *Relay) Run() error {
	maxObs := r.MaxObserve
	if maxObs <= 0 {
		maxObs = DefaultMaxObserve
	}
	hold := min(r.Hold, maxObs)
	if r.Hold == 0 {
		hold = min(1<<20, maxObs)
	}
	br := bufio.NewReaderSize(r.Src, readSize)
	var (
		sc        mcp.Scanner // fed every chunk: the id may come after 64 MiB
		l         = Line{}
		streaming bool // the line's first bytes are already on the wire
		started   bool
		slab      []byte
		batch     []byte // whole lines routed and not yet written
		observed  []Line // their observations, handed over once written
		clock     time.Time
		reading   = true // the next ReadSlice reads from Src: read the clock after it
	)
	limit, decided := maxObs, r.Keep == nil // how much of this line is observed
	reset := func() {
		l = Line{}
		sc.Reset()
		streaming, started = false, false
		limit, decided = maxObs, r.Keep == nil
	}
	// own copies b for Observe, out of the current slab.
	own := func(b []byte) []byte {
		if len(b) > slabSize/4 {
			return append(make([]byte, 0, len(b)), b...)
		}
		if cap(slab)-len(slab) < len(b) {
			slab = make([]byte, 0, slabSize)
		}
		n := len(slab)
		slab = append(slab, b...)
		return slab[n:len(slab):len(slab)]
	}
	observe := func(chunk []byte) {
		if !decided && len(l.Data)+len(chunk) > hold {
			// Fill the held prefix first: Keep judges the line by it.
			n := hold - len(l.Data)
			l.Data = append(l.Data, chunk[:n]...)
			chunk = chunk[n:]
			decided = true
			if !r.Keep(l.Data) {
				limit = hold
			}
		}
		if len(l.Data)+len(chunk) > hold && cap(l.Data) < limit {
			// A long line kept whole: take the observation buffer at once instead
			// of growing by appends, which kept old and new arrays alive together.
			l.Data = append(make([]byte, 0, limit), l.Data...)
		}
		if room := limit - len(l.Data); room > 0 {
			if len(chunk) > room {
				chunk = chunk[:room]
				l.Truncated = true
			}
			l.Data = append(l.Data, chunk...)
		} else if len(chunk) > 0 {
			l.Truncated = true
		}
	}
	// flush writes the batch in one write, then hands its lines to Observe.
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		r.Dst.acquire()
		werr := r.Dst.writeLocked(batch)
		r.Dst.release()
		batch = batch[:0]
		if werr != nil {
			observed = observed[:0]
			return fmt.Errorf("%w: %w", ErrWrite, werr)
		}
		for i := range observed {
			if r.Observe != nil {
				r.Observe(&observed[i])
			}
			observed[i] = Line{}
		}
		observed = observed[:0]
		return nil
	}
	// more reports whether the reader holds another complete line.
	more := func() bool {
		buf, _ := br.Peek(br.Buffered())
		return bytes.IndexByte(buf, '\n') >= 0
	}
	// stream starts writing a line too long to hold: what came before goes first.
	stream := func() error {
		if err := flush(); err != nil {
			return err
		}
		if r.Ready != nil {
			r.Ready()
		}
		r.Dst.acquire()
		streaming = true
		return nil
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if reading || err != nil {
			clock = time.Now()
		}
		reading = err != nil
		if len(chunk) > 0 {
			started = true
			r.Progress.Add(int64(len(chunk)))
			sc.Write(chunk)
		}
		complete := err == nil
		if !complete && len(chunk) > 0 {
			// A piece of a longer line, or the last line without a newline.
			l.Size += int64(len(chunk))
			if streaming {
				observe(chunk)
				if werr := r.Dst.writeLocked(chunk); werr != nil {
					r.Dst.release()
					return fmt.Errorf("%w: %w", ErrWrite, werr)
				}
			} else if int(l.Size) <= hold && err == bufio.ErrBufferFull {
				if l.Data == nil {
					// A line longer than the reader's buffer: take its held prefix
					// at once rather than by doubling appends, garbage on every long line.
					l.Data = make([]byte, 0, hold)
				}
				observe(chunk)
			} else if err != bufio.ErrBufferFull && len(l.Data)+len(chunk) <= hold {
				// The stream ended inside a held line: the end of Run decides.
				observe(chunk)
			} else {
				// Too long to hold (or the stream ended): flush what was held and stream the rest.
				held := len(l.Data)
				observe(chunk)
				if serr := stream(); serr != nil {
					return serr
				}
				var werr error
				if held > 0 {
					werr = r.Dst.writeLocked(l.Data[:held])
				}
				if werr == nil {
					werr = r.Dst.writeLocked(chunk)
				}
				if werr != nil {
					r.Dst.release()
					return fmt.Errorf("%w: %w", ErrWrite, werr)
				}
			}
		}
		if complete {
			l.Size += int64(len(chunk))
			body := chunk[:len(chunk)-1]
			heldLen := len(l.Data)
			if streaming || heldLen > 0 {
				observe(body)
				l.Msg = sc.Msg(l.Data)
			} else {
				// Small lines are copied once (the reader's buffer is reused),
				// unless nobody keeps them: the reader's buffer holds them until
				// the batch is written and observed, since the next read is
				// only made with a whole line buffered.
				if len(body) > maxObs {
					body = body[:maxObs]
					l.Truncated = true
				}
				keep := true
				if r.Kept != nil {
					l.Data, l.Msg = body, sc.Msg(body)
					keep = r.Kept(&l)
				}
				if keep {
					// Msg's slices point into the copy, not the reader's buffer.
					l.Data = own(body)
					l.Msg = sc.Msg(l.Data)
				}
			}
			l.Forwarded = true
			l.End = clock
			l.Held = !streaming && !l.Truncated
			l.Routed = r.Route != nil
			if r.Route != nil && !r.Route(&l) && l.Held {
				l.Forwarded = false
			}
			l.Held = false
			switch {
			case streaming:
				werr := error(nil)
				if l.Forwarded {
					werr = r.Dst.writeLocked(chunk)
				}
				r.Dst.release()
				if werr != nil {
					return fmt.Errorf("%w: %w", ErrWrite, werr)
				}
				if r.Observe != nil {
					r.Observe(&l)
				}
			case l.Forwarded && heldLen > 0:
				// A line that took several reads: written from the held copy, not
				// copied again into the batch.
				if ferr := flush(); ferr != nil {
					return ferr
				}
				r.Dst.acquire()
				werr := r.Dst.writeLocked(l.Data[:heldLen])
				if werr == nil {
					werr = r.Dst.writeLocked(chunk)
				}
				r.Dst.release()
				if werr != nil {
					return fmt.Errorf("%w: %w", ErrWrite, werr)
				}
				if r.Observe != nil {
					r.Observe(&l)
				}
			case l.Forwarded:
				batch = append(batch, chunk...)
				observed = append(observed, l)
			default:
				if len(batch) == 0 && r.Observe != nil {
					r.Observe(&l)
				} else {
					observed = append(observed, l) // after the lines before it
				}
			}
			if reading = !more(); reading || len(batch) >= readSize {
				if ferr := flush(); ferr != nil {
					return ferr
				}
			}
			reset()
			continue
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		// The stream ended (or failed) in the middle of a line, or between lines.
		if ferr := flush(); ferr != nil {
			return ferr
		}
		if started {
			l.Unterminated = true
			l.Forwarded = true
			l.End = clock
			l.Msg = sc.Msg(l.Data)
			whole := !l.Msg.Partial // the scanner saw the value close
			l.Msg.Partial = true
			parked := false
			if streaming && whole && r.Route != nil {
				// A long complete last message, already on the wire: Route
				// cannot swallow it but must settle it (its answer was given).
				l.Routed = true
				r.Route(&l)
			}
			if !streaming {
				if r.ParkTorn && !mcp.Valid(l.Data) {
					l.Forwarded = false
					parked = true
				} else if l.Held, l.Routed = !l.Truncated, r.Route != nil; l.Routed && !r.Route(&l) && l.Held {
					// A complete last message without its newline is still a message:
					// Route settles it (or swallows it) like any other.
					l.Forwarded = false
				} else {
					r.Dst.acquire()
					if werr := r.Dst.writeLocked(l.Data); werr != nil {
						r.Dst.release()
						return fmt.Errorf("%w: %w", ErrWrite, werr)
					}
					streaming = true
				}
			}
			l.Held = false
			if streaming {
				r.Dst.markOpen()
				r.Dst.release()
			}
			if parked {
				r.Dst.park(&l)
			} else if r.Observe != nil {
				r.Observe(&l)
			}
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
}

// Wire is one direction's destination. It keeps the relay's lines and the
// shim's own messages whole: a message written with WriteMessage never lands
// inside a forwarded line.
type Wire struct {
	mu   sync.Mutex
	w    io.Writer
	open bool  // the last forwarded bytes did not end a line
	tail *Line // a torn last line parked by a relay (see Relay.ParkTorn)
	// OnTerminate, when set, is told each time the Wire ended a line a dead
	// stream left open. It runs with the Wire held and must not write to it.
	OnTerminate func()
	// OnTail, when set, gets a parked line once its fate is known: Forwarded
	// when Flush delivered it, not when a later write dropped it. It runs with
	// the Wire held and must not write to it.
	OnTail func(*Line)
}

// NewWire returns a Wire writing to w. Every write goes straight to w.
func NewWire(w io.Writer) *Wire { return &Wire{w: w} }

// acquire takes the Wire for a line. A line an earlier stream left open (its
// source died mid-line) is ended first, so the two are never glued together;
// a parked torn line is dropped.
func (w *Wire) acquire() {
	w.mu.Lock()
	w.dropTail()
	if w.open {
		w.open = false
		if _, err := w.w.Write([]byte("\n")); err == nil && w.OnTerminate != nil {
			w.OnTerminate()
		}
	}
}
func (w *Wire) release() { w.mu.Unlock() }

// park keeps l, the torn last line of a stream, until Flush or the next write.
func (w *Wire) park(l *Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropTail()
	t := *l
	w.tail = &t
}

// dropTail drops the parked line: something else is written after it. The
// caller holds the lock.
func (w *Wire) dropTail() {
	if w.tail == nil {
		return
	}
	t := w.tail
	w.tail = nil
	if w.OnTail != nil {
		w.OnTail(t)
	}
}

// Flush delivers a parked torn line, as the last bytes of the stream: nothing
// follows it, so nothing can be glued to it.
func (w *Wire) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tail
	if t == nil {
		return nil
	}
	w.tail = nil
	_, err := w.w.Write(t.Data)
	if err == nil {
		t.Forwarded = true
		w.open = true
	}
	if w.OnTail != nil {
		w.OnTail(t)
	}
	return err
}

// Busy reports whether a line is being written right now (a slow reader at
// the other end keeps it busy).
func (w *Wire) Busy() bool {
	if w.mu.TryLock() {
		w.mu.Unlock()
		return false
	}
	return true
}

// writeLocked writes p whole; the caller holds the lock.
func (w *Wire) writeLocked(p []byte) error {
	_, err := w.w.Write(p)
	return err
}

// markOpen records that the stream ended in the middle of a line; the caller
// holds the lock.
func (w *Wire) markOpen() { w.open = true }

// WriteMessage writes one line of the shim's own (msg must not contain a
// newline; one is added). If a forwarded stream ended in the middle of a
// line, that line is terminated first so the two are never glued together;
// terminated reports that it happened. A parked torn line is dropped.
func (w *Wire) WriteMessage(msg []byte) (terminated bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropTail()
	if w.open {
		terminated = true
		w.open = false
	}
	if len(msg) > readSize {
		// A long message (a remote server's 64 MiB answer) is not copied to
		// add its newline: three writes under the lock instead.
		if terminated {
			if _, err = w.w.Write([]byte("\n")); err != nil {
				return terminated, err
			}
		}
		if _, err = w.w.Write(msg); err == nil {
			_, err = w.w.Write([]byte("\n"))
		}
		return terminated, err
	}
	buf := make([]byte, 0, len(msg)+2)
	if terminated {
		buf = append(buf, '\n')
	}
	buf = append(buf, msg...)
	buf = append(buf, '\n')
	_, err = w.w.Write(buf)
	return terminated, err
}

// Stream writes one line that arrives while it is written: first, then
// what r yields until io.EOF, then a newline, holding the Wire so that no
// other message lands inside it. A read error (the source broke off, or
// refused to go on) leaves the line open, so the next write ends it first;
// it is returned as readErr, a failure to write as writeErr.
func (w *Wire) Stream(first []byte, r io.Reader) (readErr, writeErr error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropTail()
	if w.open {
		w.open = false
		if _, err := w.w.Write([]byte("\n")); err != nil {
			return nil, err
		}
	}
	if _, err := w.w.Write(first); err != nil {
		return nil, err
	}
	buf := make([]byte, readSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.w.Write(buf[:n]); werr != nil {
				return nil, werr
			}
		}
		if err == io.EOF {
			_, werr := w.w.Write([]byte("\n"))
			return nil, werr
		}
		if err != nil {
			w.open = true
			return err, nil
		}
	}
}

// WriteUnterminated writes p, the last bytes of a stream without their
// newline, as a line left open: the next write ends it first.
func (w *Wire) WriteUnterminated(p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropTail()
	if w.open {
		w.open = false
		if _, err := w.w.Write([]byte("\n")); err != nil {
			return err
		}
	}
	_, err := w.w.Write(p)
	w.open = true
	return err
}
