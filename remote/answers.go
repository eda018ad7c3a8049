package remote

// What the bridge writes to the client from the server: answers to the
// client's requests, exactly one per request whatever stream it arrives on,
// and the server's requests and notifications. Nothing else: a second answer
// to one id, an answer to an id the client never sent (or no id at all, as a
// server that forgot the session writes), and JSON that is no JSON-RPC
// message are dropped and recorded.

import (
	"bytes"
	"encoding/json"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// doneCap bounds the answered ids remembered: a long session's ids do not
// pile up, and a duplicate comes soon after the answer it repeats.
const doneCap = 4096

// doneSet is the ids of the last doneCap requests answered, and whether the
// shim answered them itself (owed). The caller holds bridge.mu.
type doneSet struct {
	ids  map[idKey]done
	ring []idKey
	next int
}

// done is one answered id: owed, and its slot in the ring. An id used
// again is in two slots; only the newer one's eviction forgets it (the
// older one's deleted the newer entry, and a late duplicate of the newer
// answer was taken for an unknown one).
type done struct {
	owed bool
	slot int
}

func newDoneSet() doneSet { return doneSet{ids: map[idKey]done{}, ring: make([]idKey, doneCap)} }

func (d *doneSet) add(id idKey, owed bool) {
	if old := d.ring[d.next]; !old.IsZero() && d.ids[old].slot == d.next {
		delete(d.ids, old)
	}
	d.ring[d.next] = id
	d.ids[id] = done{owed: owed, slot: d.next}
	d.next = (d.next + 1) % doneCap
}

func (d *doneSet) has(id idKey) (owed, ok bool) { e, ok := d.ids[id]; return e.owed, ok }

// forget drops id: the client sent a new request with it.
func (d *doneSet) forget(id idKey) { delete(d.ids, id) }

// verdict is what becomes of one server message or batch element.
type verdict int

const (
	pass      verdict = iota // a request, a notification, or the answer to a pending request
	duplicate                // the request was answered already (by the server or the shim)
	unknown                  // no request of the client's has this id (or there is no id)
	noise                    // JSON, but no JSON-RPC message
	own                      // the answer to the shim's own request (a replayed initialize)
)

// fromServer passes one server message (a JSON body or an event's data) to
// the client as one line.
func (b *bridge) fromServer(data []byte) {
	line, ok := oneLine(data)
	if !ok {
		b.emit(phases.Transport, phases.StdoutNoise, ledger.F(phases.FieldDirection, "server"), ledger.F("bytes", len(data)),
			ledger.F(phases.FieldPreview, redact.Preview(data, 120)), ledger.F("action", "dropped"))
		b.say("the server sent a body that is not JSON (%d bytes); dropped", len(data))
		return
	}
	msg := inspect(line)
	lockList, listed, whole := false, false, false
	var verdicts []verdict
	var ids []string
	b.mu.Lock()
	msg.each(func(m message) {
		v := b.judgeAnswer(m)
		if ch := b.own[m.id]; ch != nil && m.isResponse() && v != pass {
			delete(b.own, m.id)
			ch <- append([]byte(nil), line...) // room for one: never blocks
			v = own
		}
		if v == pass && m.isResponse() {
			lockList = lockList || !msg.isBatch() && b.toolsList(m)
			c := b.pending[m.id]
			whole = whole || c.method == mcp.MethodListTools
			if c.method == mcp.MethodListTools && m.isResult() && !msg.isBatch() {
				b.listed(m.id, m.result)
			}
			listed = listed || !msg.isBatch() && c.method == mcp.MethodListTools && m.isResult() && mcp.IsModern(c.version)
			if b.pending[m.id].method == mcp.MethodInitialize && m.isResult() {
				if ver := m.negotiated(); ver != "" {
					b.version = ver
				}
			}
			b.take(m.id)
			b.done.add(m.id, false)
		}
		verdicts = append(verdicts, v)
		ids = append(ids, string(m.rawID))
	})
	b.mu.Unlock()
	kept := 0
	for i, v := range verdicts {
		switch v {
		case pass:
			kept++
		case duplicate:
			b.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, ids[i]))
		case unknown:
			id := ids[i]
			if id == "" {
				id = "none"
			}
			b.emit(phases.Transport, phases.UnknownResponse, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldDirection, "server"), ledger.F("action", "dropped"))
		case noise:
			b.emit(phases.Transport, phases.StdoutNoise, ledger.F(phases.FieldDirection, "server"), ledger.F("bytes", len(line)),
				ledger.F(phases.FieldPreview, redact.Preview(line, 120)), ledger.F("action", "dropped"))
		}
	}
	if kept == 0 {
		return
	}
	if kept < len(verdicts) {
		line = keepElements(line, verdicts) // a batch, some of it dropped
	}
	if listed {
		if result := b.filterTools(msg.result); result != nil {
			line = withResult(line, result)
			msg = inspect(line)
		}
	}
	if lockList && !b.checkLock(msg) {
		b.observe(phases.FromServer, line, true) // recorded as the list it was; the client got the error
		return
	}
	if _, err := b.wire.WriteMessage(line); err != nil {
		b.clientGone()
		return
	}
	b.observe(phases.FromServer, line, whole)
}

// judgeAnswer says what becomes of m; the caller holds mu.
func (b *bridge) judgeAnswer(m message) verdict {
	switch {
	case m.kind == mcp.Request || m.kind == mcp.Notification:
		return pass
	case !m.isResponse():
		return noise
	case b.pending[m.id] != nil:
		return pass
	}
	if _, ok := b.done.has(m.id); ok && m.hasID() {
		return duplicate
	}
	// An id-null error (the server could not tie it to a request) is not
	// passed on: clients take it as fatal (the Go SDK closes). The request it
	// answers gets the shim's error, with this body, when its exchange ends.
	return unknown
}

// keepElements rebuilds a batch with the elements whose verdict is pass.
func keepElements(line []byte, verdicts []verdict) []byte {
	var parts []json.RawMessage
	if json.Unmarshal(line, &parts) != nil || len(parts) != len(verdicts) {
		return line
	}
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for i, p := range parts {
		if verdicts[i] != pass {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
		n++
	}
	b.WriteByte(']')
	return b.Bytes()
}
