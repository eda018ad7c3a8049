package supervisor

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// relayClient is the client relay: the client's stdin to whichever child is
// current (switchWriter), routed by routeClient. It tells the loop when the
// client's stdin ends. It returns at that EOF, or when reading it fails.
func (s *Supervisor) relayClient() {
	r := &jsonrpc.Relay{
		Src:        s.cfg.ClientIn,
		Dst:        s.toChild,
		MaxObserve: s.cfg.MaxObserve,
		Route:      s.routeClient,
		Keep:       func([]byte) bool { return s.cfg.CaptureFull },
		Kept:       s.kept,
		Ready:      s.sess.waitReady,
	}
	err := r.Run()
	s.events <- loopEvent{clientEOF: true, err: err}
}

// routeClient is the client relay's Route: it forwards, holds across a
// restart, or answers in the child's place. Once Run has ended the session
// it does nothing: the recorder is closed, and the shim is exiting.
func (s *Supervisor) routeClient(l *jsonrpc.Line) bool {
	s.routing.Lock()
	defer s.routing.Unlock()
	if s.ended {
		return false
	}
	if !l.Held && s.childIn.takeCut() {
		// Its start reached a child that is gone, or nothing: no child has it whole.
		each(&l.Msg, func(m *mcp.Msg) {
			if m.Kind == mcp.Request {
				s.answer(newPending(m), "restarted while the request was being sent")
			}
		})
		return false
	}
	forward, r := s.sess.fromClient(l)
	for _, p := range r.answer {
		s.answer(p, notRunning)
	}
	if r.dropped {
		s.emit(phases.Supervision, phases.MessageRejected, ledger.F(phases.FieldMethod, l.Msg.Method), ledger.F("kind", l.Msg.Kind.String()),
			ledger.F("bytes", l.Size), ledger.F(phases.FieldReason, "no server running"))
	}
	for _, id := range r.late {
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, id))
	}
	if forward {
		each(&l.Msg, s.mem.noteClient)
		s.record(phases.FromClient, l)
	}
	return forward
}

// record hands a line to the recorder as Route lets it through, just before
// its last bytes are written (a non-blocking enqueue): recorded after the
// write, a fast answer could reach the ledger before its request.
func (s *Supervisor) record(dir phases.Dir, l *jsonrpc.Line) {
	o := tap.Observation{Data: l.Data, Size: l.Size, Truncated: l.Truncated, Unterminated: l.Unterminated, Forwarded: l.Forwarded, Msg: l.Msg, End: l.End}
	s.cfg.Recorder.Line(dir, &o)
}

// kept is the relays' Kept: whether the recorder keeps a whole line's data.
func (s *Supervisor) kept(l *jsonrpc.Line) bool { return s.cfg.Recorder.Kept(&l.Msg) }

// routeServer is the Route of c's stdout relay.
func (s *Supervisor) routeServer(c *child, l *jsonrpc.Line) bool {
	if l.Msg.IsResponse() && mcp.IsOwnID(l.Msg.ID) {
		c.noteHandshake(l) // the replayed handshake, or any answer of a modern child
		select {
		case c.own <- append([]byte(nil), l.Data...):
		default:
		}
		if l.Held {
			return false
		}
		// Over a MiB, its start is already with the client, under an id it never
		// used (clients ignore those): say so rather than pretend.
		s.emit(phases.Transport, phases.OwnAnswerForwarded, ledger.F(phases.FieldRequestID, string(l.Msg.RawID)), ledger.F("bytes", l.Size))
		return true
	}
	answered, late := s.sess.fromServer(&l.Msg)
	if late && l.Held {
		// The shim answered this request itself when the child died: one answer only.
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, string(l.Msg.RawID)), ledger.F(phases.FieldDirection, "server"))
		return false
	}
	if l.Msg.Kind == mcp.Notification && l.Msg.Method == mcp.NotificationCancelled {
		id, _ := mcp.ParseID(mcp.Member(l.Msg.Params, "requestId"))
		s.mem.endListen(id) // the server ended the client's subscription stream
	}
	c.noteHandshake(l)
	if l.Held && s.sess.reacknowledged(&l.Msg) {
		l.Forwarded = false
		s.record(phases.FromServer, l)
		return false
	}
	if s.cfg.DivertNoise && l.Msg.Kind == mcp.Noise && l.Held {
		l.Forwarded = false
		s.record(phases.FromServer, l)
		return false
	}
	s.record(phases.FromServer, l)
	if answered == mcp.MethodListTools && s.cfg.CheckTools != nil && !s.checkLock(c, l) {
		return false
	}
	if answered != "" || l.Msg.IsResponse() {
		s.markReplied()
	}
	return true
}

// keepWhole says whether a long line from the server is observed up to
// --max-observe rather than its first MiB: an answer to tools/list, whose
// tools are digested, and every line with --capture full. Anything else keeps
// its id, method and size; a 64 MiB tool result costs no 16 MiB buffer.
func (s *Supervisor) keepWhole(prefix []byte) bool {
	if s.cfg.CaptureFull {
		return true
	}
	m := mcp.Peek(prefix)
	if mcp.IsOwnID(m.ID) {
		return true // the shim's own tools/list after a restart
	}
	if !m.ID.IsZero() {
		return s.sess.pendingMethod(m.ID) == mcp.MethodListTools
	}
	// Some serializers (the TypeScript SDK) write the id last: judge by the result's shape.
	return m.Cut == "result" && mcp.FirstKey(m.CutValue) == "tools"
}

// observeDelivered records a held client line when it reaches the child.
func (s *Supervisor) observeDelivered(line []byte) {
	now := time.Now()
	l := jsonrpc.Line{Data: line, Size: int64(len(line) + 1), Forwarded: true, Msg: mcp.Peek(line), End: now}
	each(&l.Msg, s.mem.noteClient)
	s.record(phases.FromClient, &l)
}

func (s *Supervisor) observeServer(l *jsonrpc.Line) {
	if l.Unterminated && !l.Routed {
		// Route did not see how the stream ended: record it here.
		s.record(phases.FromServer, l)
		return
	}
	if s.cfg.DivertNoise && !l.Forwarded {
		s.cfg.Stderr.Write(append(append([]byte(nil), l.Data...), '\n'))
	}
	if !l.Forwarded && l.Msg.IsResponse() {
		return // the answer to one of the shim's own requests
	}
	s.mem.noteServer(l)
}
