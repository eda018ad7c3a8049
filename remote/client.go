package remote

// What the client sends: each line is read whole, remembered when a new
// session will need it again, and POSTed; requests run concurrently.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// readSize is the client reader's buffer; longer lines are read in pieces.
const readSize = 64 << 10

// clientQueue bounds the lines read ahead of the one being sent: a client
// that writes faster than the server takes its lines meets backpressure.
const clientQueue = 64

// clientIn is what the client wrote: its lines in order, closed at the end
// of stdin (err says why, when it was no EOF); eof is closed then too.
type clientIn struct {
	lines chan []byte
	eof   chan struct{}
	err   error
}

// readClient reads the client's lines into in until stdin ends or the
// bridge stops. A notifications/cancelled for a request in flight does not
// queue: it is sent at once, so that it reaches the server while the
// request it cancels is pending (an initialize holds the queue until it is
// answered).
func (b *bridge) readClient(in *clientIn) {
	defer func() { close(in.lines); close(in.eof) }()
	br := bufio.NewReaderSize(b.cfg.ClientIn, readSize)
	for {
		line, long, err := readLine(br, b.cfg.MaxMessage)
		if long != nil {
			b.refuseLong(long)
		} else if len(bytes.TrimSpace(line)) > 0 && !b.cancelNow(line) {
			select {
			case in.lines <- line:
			case <-b.ctx.Done():
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				in.err = err
			}
			return
		}
	}
}

// cancelNow sends line on a goroutine of its own when it is a
// notifications/cancelled for a request in flight, and reports whether it
// did.
func (b *bridge) cancelNow(line []byte) bool {
	m := mcp.Peek(line)
	if m.Kind != mcp.Notification || m.Method != mcp.NotificationCancelled {
		return false
	}
	id := keyOf(mcp.Member(m.Params, "requestId"))
	b.mu.Lock()
	now := b.pending[id] != nil && !b.closing
	if now {
		b.posts.Add(1)
	}
	b.mu.Unlock()
	if now {
		// Exits when its POST does.
		go func() {
			defer b.posts.Done()
			b.fromClient(line)
		}()
	}
	return now
}

// dispatch sends the client's lines in the order they came: notifications
// and answers on this goroutine (a server must see notifications/initialized
// before what follows it), requests each on its own, as a client may have
// many in flight, except that the lines after an initialize wait for its
// answer (its session, its era). It reports the end of stdin on done once
// every line before it was sent, or at once while an initialize holds the
// rest: the client left. It exits at the end of the lines, or when the
// bridge stops (then the lines still queued are refused: their requests get
// an error).
func (b *bridge) dispatch(in *clientIn, done chan<- error) {
	eof := in.eof
	reported := false
	report := func() {
		if !reported {
			reported = true
			done <- in.err // room for one: never blocks
		}
	}
	var gate <-chan struct{}
	for {
		for gate != nil {
			select {
			case <-gate:
				gate = nil
			case <-eof:
				eof = nil
				report()
			case <-b.ctx.Done():
				b.refuseQueued(in.lines)
				return
			}
		}
		select {
		case line, ok := <-in.lines:
			if !ok {
				report()
				return
			}
			gate = b.fromClient(line)
		case <-b.ctx.Done():
			b.refuseQueued(in.lines)
			return
		}
	}
}

// refuseQueued takes the lines read and not sent when the bridge stopped:
// each request gets the shim's error (fromClient, closing).
func (b *bridge) refuseQueued(lines <-chan []byte) {
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return
			}
			b.fromClient(line)
		default:
			return
		}
	}
}

// longLine is a client line over --max-message, read to its end and not
// kept: its first MiB, its size, and what the scanner found in all of it
// (its id, wherever it is).
type longLine struct {
	head []byte
	size int64
	msg  mcp.Msg
}

// readLine reads one line without its newline, up to max bytes; the last
// line of a stream may have none. A longer line is read to its end and
// dropped: line is nil and long says what it was.
func readLine(br *bufio.Reader, max int64) (line []byte, long *longLine, err error) {
	var sc mcp.Scanner
	for {
		chunk, err := br.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if long == nil && int64(len(line)+len(chunk)) > max {
			long = &longLine{head: append([]byte(nil), line[:min(len(line), holdSize)]...), size: int64(len(line))}
			sc.Write(line)
			line = nil
		}
		if long != nil {
			sc.Write(chunk)
			long.size += int64(len(chunk))
			if n := holdSize - len(long.head); n > 0 {
				long.head = append(long.head, chunk[:min(len(chunk), n)]...)
			}
		} else {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long != nil {
			long.msg = sc.Msg(long.head)
		}
		return line, long, err
	}
}

// refuseLong answers a client line over --max-message: it is not sent, each
// request found in it gets the shim's error, and the ledger and stderr say
// so.
func (b *bridge) refuseLong(l *longLine) {
	o := tap.Observation{Data: l.head, Size: l.size + 1, Truncated: true, End: time.Now(), Msg: l.msg}
	b.rec.Line(phases.FromClient, &o)
	m := fromMsg(l.msg)
	b.emit(phases.Transport, phases.MessageTooLarge, ledger.F(phases.FieldDirection, "client"), ledger.F(phases.FieldMethod, m.method),
		ledger.F(phases.FieldRequestID, string(m.rawID)), ledger.F("bytes", l.size), ledger.F("max_bytes", b.cfg.MaxMessage))
	b.say("a client line of %d bytes is over --max-message (%d bytes); not sent", l.size, b.cfg.MaxMessage)
	m.each(func(r message) {
		if r.isRequest() && r.hasID() {
			b.answer(&call{id: r.id, rawID: r.rawID, method: r.method, tool: r.name},
				fmt.Sprintf("mcpshim: the request is %d bytes, over --max-message (%d bytes); not sent", l.size, b.cfg.MaxMessage), nil)
		}
	})
}

// fromClient sends one client line on. For an initialize it returns a
// channel closed once the initialize is answered: what follows waits for it.
func (b *bridge) fromClient(line []byte) (initialized <-chan struct{}) {
	msg := inspect(line)
	b.observe(phases.FromClient, line, false)
	if msg.isNoise() || !json.Valid(line) {
		b.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldDirection, "client"), ledger.F(phases.FieldReason, "not a JSON-RPC message"), ledger.F("bytes", len(line)))
		b.say("a client line is not JSON-RPC; not sent (%d bytes)", len(line))
		return nil
	}
	b.mu.Lock()
	switch msg.method {
	case mcp.MethodInitialize:
		b.initLine = append([]byte(nil), line...)
	case mcp.NotificationInitialized:
		b.initialized = append([]byte(nil), line...)
	}
	b.remember(msg, line)
	down, step := b.down, b.step
	var calls []*call
	ctx, cancel := context.WithCancel(b.ctx)
	msg.each(func(m message) {
		if m.isRequest() && m.hasID() {
			b.done.forget(m.id) // the client may use an id again once it was answered
			c := &call{id: m.id, rawID: m.rawID, method: m.method, tool: m.name, version: m.version, cancel: cancel, done: make(chan struct{})}
			b.pending[m.id] = c
			calls = append(calls, c)
		}
	})
	if msg.method == mcp.MethodInitialize && len(calls) == 1 {
		initialized = calls[0].done
	}
	closing := b.closing
	wait := down && len(calls) > 0 && step != nil && !closing
	if wait && !b.early {
		b.early = true
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	if wait {
		b.posts.Add(1)
	}
	b.mu.Unlock()
	if wait {
		// A request during the backoff brings the step's attempt forward
		// (once per step) and waits for it: sent if it reconnected.
		go func() {
			defer b.posts.Done()
			defer cancel()
			select {
			case <-step:
			case <-ctx.Done():
			}
			b.mu.Lock()
			down := b.down
			b.mu.Unlock()
			if down || ctx.Err() != nil {
				b.failDown(calls)
				return
			}
			b.send(ctx, line, msg, false)
		}()
		return initialized
	}
	if down {
		cancel()
		b.failDown(calls)
		if len(calls) == 0 {
			b.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldReason, "server unreachable"))
		}
		return initialized
	}
	if len(calls) == 0 && !closing {
		b.send(ctx, line, msg, false)
		cancel()
		return nil
	}
	b.mu.Lock()
	closing = b.closing
	if !closing {
		b.posts.Add(1)
	}
	b.mu.Unlock()
	if closing {
		cancel()
		if len(calls) == 0 {
			b.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldReason, "the shim is stopping"))
		}
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the shim is stopping", b.cfg.Name))
		return initialized
	}
	// Exits when the request's exchange ends: answered, failed, or cut off
	// when the bridge stops.
	go func() {
		defer b.posts.Done()
		defer cancel()
		b.send(ctx, line, msg, false)
	}()
	return initialized
}

// failDown answers calls during an outage: not sent, why, when the server
// was last tried and when it is tried next.
func (b *bridge) failDown(calls []*call) {
	b.mu.Lock()
	reason, tried, next := b.downReason, time.Since(b.tried).Round(100*time.Millisecond), time.Until(b.retryAt).Round(100*time.Millisecond)
	b.mu.Unlock()
	for _, c := range calls {
		b.fail(c.id, fmt.Sprintf("mcpshim: server %s is unreachable (%s); not sent; last tried %v ago, reconnecting, next attempt in %v", b.cfg.Name, reason, tried, max(next, 0)), nil)
	}
}

func hasRequest(msg message) bool {
	found := false
	msg.each(func(m message) { found = found || m.isRequest() })
	return found
}

// answered reports whether every request of msg has its answer.
func (b *bridge) answered(msg message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	done := true
	msg.each(func(m message) {
		if m.isRequest() && b.pending[m.id] != nil {
			done = false
		}
	})
	return done
}

// failOpen answers the requests of msg that are still open.
func (b *bridge) failOpen(msg message, text string) {
	msg.each(func(m message) {
		if m.isRequest() {
			b.fail(m.id, text, nil)
		}
	})
	if msg.method == mcp.NotificationInitialized {
		b.startGET()
	}
}
