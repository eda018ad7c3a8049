package remote

// One message from the server (a JSON body, or an event's data) on its way
// to the client. It reaches the client only whole and valid: a message cut
// off midway (a stream that breaks, then is resumed and sends it again) must
// not leave half of it on the client's wire. Up to the hold it is read with
// no more ado; a longer one is read whole too, its line breaks outside
// strings dropped as it comes, one at a time across the bridge, so that
// memory stays bounded by --max-message and a few holds.

import (
	"bytes"
	"io"
	"time"
)

// holdSize is how much of a message is read before it counts as long: a
// long one waits for the other long ones.
const holdSize = 1 << 20

// deliver reads one message from r (io.EOF at its end) and passes it on
// once it is whole. It returns the read error other than io.EOF:
// errTooLarge (r is capped at --max-message), or a stream cut short; then
// nothing of the message was written. abort, when set, breaks off a long
// message that takes longer than the request timeout: while it is read it
// holds the other long messages back, and a stream with no request
// deadline of its own (the GET stream, the old transport's) must not hold
// them for good.
func (b *bridge) deliver(r io.Reader, abort func()) error {
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, r, holdSize+1)
	if err != nil && err != io.EOF {
		return err
	}
	if n <= holdSize {
		if len(bytes.TrimSpace(buf.Bytes())) > 0 {
			b.fromServer(buf.Bytes())
		}
		return nil
	}
	b.long.Lock()
	defer b.long.Unlock()
	if abort != nil {
		// Runs once, if the message is still being read after Timeout.
		t := time.AfterFunc(b.cfg.Timeout, abort)
		defer t.Stop()
	}
	msg, err := readLong(buf.Bytes(), r)
	if err != nil {
		return err
	}
	b.fromServer(msg)
	return nil
}

// readLong reads the rest of a long message after head, compacted as it
// comes (stdio carries one message per line): one buffer, grown by a
// quarter when large, not doubled.
func readLong(head []byte, rest io.Reader) ([]byte, error) {
	var c compactor
	msg := append(make([]byte, 0, 2*len(head)), c.compact(head)...)
	for {
		if len(msg) == cap(msg) {
			msg = append(msg, 0)[:len(msg)]
		}
		n, err := rest.Read(msg[len(msg):cap(msg)])
		msg = append(msg, c.compact(msg[len(msg):len(msg)+n])...)
		if err == io.EOF {
			return msg, nil
		}
		if err != nil {
			return nil, err
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
