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
)

// readClient reads the client's lines and sends each on. Notifications and
// answers are posted in order on this goroutine (a server must see
// notifications/initialized before what follows it); requests run
// concurrently, as a client may have many in flight.
func (b *bridge) readClient() error {
	br := bufio.NewReaderSize(b.cfg.ClientIn, readSize)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			b.fromClient(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line whole, without its newline; the last line of a
// stream may have none.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			line = line[:len(line)-1]
		}
		return line, err
	}
}

func (b *bridge) fromClient(line []byte) {
	msg := inspect(line)
	b.observe(phases.FromClient, line, false)
	if msg.isNoise() || !json.Valid(line) {
		b.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldDirection, "client"), ledger.F(phases.FieldReason, "not a JSON-RPC message"), ledger.F("bytes", len(line)))
		b.say("a client line is not JSON-RPC; not sent (%d bytes)", len(line))
		return
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
	wait := down && len(calls) > 0 && step != nil && !b.closing
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
		return
	}
	if down {
		cancel()
		b.failDown(calls)
		if len(calls) == 0 {
			b.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldReason, "server unreachable"))
		}
		return
	}
	if len(calls) == 0 || msg.method == mcp.MethodInitialize {
		b.send(ctx, line, msg, false)
		cancel()
		return
	}
	b.mu.Lock()
	closing := b.closing
	if !closing {
		b.posts.Add(1)
	}
	b.mu.Unlock()
	if closing {
		cancel()
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the shim is stopping", b.cfg.Name))
		return
	}
	// Exits when the request's exchange ends: answered, failed, or cut off
	// when the bridge stops.
	go func() {
		defer b.posts.Done()
		defer cancel()
		b.send(ctx, line, msg, false)
	}()
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
