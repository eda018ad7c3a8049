package remote

// One message from the server (a JSON body, or an event's data) on its way
// to the client. Up to a hold it is read whole and judged before a byte is
// written (answers.go); a longer one is streamed as it arrives, as the
// stdio relay streams a long line, so a 64 MiB answer is never held:
// "forward first, record second". It is judged by what its first bytes
// say, and its id, wherever it is (the TypeScript SDK writes it last), is
// found by the scanner that sees every byte.

import (
	"bytes"
	"io"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// holdSize is how much of a message is read before it must be judged: as
// the stdio relay holds a line.
const holdSize = 1 << 20

// deliver reads one message from r (io.EOF at its end) and passes it on;
// a message up to hold bytes is judged whole. It returns the read error
// other than io.EOF: errTooLarge, or a stream cut short (then a streamed
// message's line was left open, and the Wire ends it before the next).
// abort, when set, breaks off a streamed message that takes longer than the
// request timeout: while it streams it holds the client's wire, and a
// stream with no request deadline of its own (the GET stream, the old
// transport's) must not hold it for good.
func (b *bridge) deliver(r io.Reader, hold int, abort func()) error {
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, r, int64(hold)+1)
	if err != nil && err != io.EOF {
		return err
	}
	if n <= int64(hold) {
		if len(bytes.TrimSpace(buf.Bytes())) > 0 {
			b.fromServer(buf.Bytes())
		}
		return nil
	}
	if abort != nil {
		// Runs once, if the message is still streaming after Timeout.
		t := time.AfterFunc(b.cfg.Timeout, abort)
		defer t.Stop()
	}
	return b.stream(buf.Bytes(), r)
}

// stream passes on a message longer than the hold: head is its start, rest
// the remainder.
func (b *bridge) stream(head []byte, rest io.Reader) error {
	var c compactor // stdio carries one message per line
	head = c.compact(head)
	sc := &mcp.Scanner{}
	sc.Write(head)
	peek := sc.Msg(head)
	first := fromMsg(peek)
	if first.kind == mcp.Noise && !peek.Partial {
		// Not a JSON object or array: no message (a partial object whose
		// id and jsonrpc come later is one, and goes on).
		return b.discard(head, rest, noise, "")
	}
	if first.hasID() { // the id came first: judged before a byte is written
		b.mu.Lock()
		v := b.judgeAnswer(first)
		b.mu.Unlock()
		if v != pass {
			return b.discard(head, rest, v, string(first.rawID))
		}
	}
	src := &scanning{r: rest, c: &c, sc: sc}
	readErr, writeErr := b.wire.Stream(head, src)
	if writeErr != nil {
		b.clientGone()
		return nil
	}
	keep := head[:min(len(head), holdSize)]
	m := fromMsg(sc.Msg(keep))
	if readErr == nil {
		b.settle(m, src.n+int64(len(head)))
	}
	l := tap.Observation{Data: append([]byte(nil), keep...), Size: int64(len(head)) + src.n + 1, Truncated: true,
		Unterminated: readErr != nil, Forwarded: true, End: time.Now(), Msg: sc.Msg(keep)}
	b.rec.Line(phases.FromServer, &l)
	return readErr
}

// settle does the bookkeeping of a streamed message once its id is known:
// the answer of a pending request ends it; a second answer, which could not
// be held back, is recorded as forwarded.
func (b *bridge) settle(m message, size int64) {
	if !m.isResponse() {
		return
	}
	b.mu.Lock()
	c := b.take(m.id)
	if c != nil {
		b.done.add(m.id, false)
	}
	b.mu.Unlock()
	if c == nil {
		// Its id came after its first MiB: it was on the wire before the
		// bridge could know it answers no pending request.
		b.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, string(m.rawID)),
			ledger.F("action", "forwarded"), ledger.F("bytes", size))
	}
}

// discard reads and drops the rest of a message the bridge will not pass
// on, and records why.
func (b *bridge) discard(head []byte, rest io.Reader, v verdict, id string) error {
	n, err := io.Copy(io.Discard, rest)
	size := int64(len(head)) + n
	switch v {
	case duplicate:
		b.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, id), ledger.F("bytes", size))
	case unknown:
		b.emit(phases.Transport, phases.UnknownResponse, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldDirection, "server"), ledger.F("action", "dropped"))
	default:
		b.emit(phases.Transport, phases.StdoutNoise, ledger.F(phases.FieldDirection, "server"), ledger.F("bytes", size),
			ledger.F(phases.FieldPreview, redact.Preview(head, 120)), ledger.F("action", "dropped"))
	}
	return err
}

// scanning reads the rest of a streamed message: line breaks outside
// strings dropped, every byte fed to the scanner.
type scanning struct {
	r  io.Reader
	c  *compactor
	sc *mcp.Scanner
	n  int64
}

func (s *scanning) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		out := s.c.compact(p[:n])
		s.sc.Write(out)
		s.n += int64(len(out))
		if len(out) > 0 || err != nil {
			return len(out), err
		}
	}
}

// compactor drops CR and LF outside JSON strings (inside one they are not
// valid JSON): a pretty-printed body becomes one line, every other byte
// kept. Its state carries over from one chunk to the next.
type compactor struct{ inStr, esc bool }

// compact rewrites p in place and returns what is left of it.
func (c *compactor) compact(p []byte) []byte {
	j := 0
	for _, ch := range p {
		switch {
		case c.inStr && c.esc:
			c.esc = false
		case c.inStr && ch == '\\':
			c.esc = true
		case c.inStr && ch == '"':
			c.inStr = false
		case c.inStr:
		case ch == '"':
			c.inStr = true
		case ch == '\r' || ch == '\n':
			continue
		}
		p[j] = ch
		j++
	}
	return p[:j]
}
