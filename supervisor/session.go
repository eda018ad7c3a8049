package supervisor

import (
	"sort"
	"sync"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

// pendingCall is a request that has not been answered yet.
type pendingCall struct {
	id     []byte // as the requester spelled it, to answer with
	method string
	tool   string
	params []byte // a subscriptions/listen's, to open it again on the next child
}

// session is what the shim must know synchronously about the traffic, as it
// passes, to keep its promises: every forwarded client request gets exactly
// one answer, and nothing is sent twice. The recorder's tracker keeps its own,
// lossy, copy for the ledger.
type session struct {
	mu            sync.Mutex
	changed       sync.Cond // state or live changed
	state         childState
	live          bool       // a child process runs or is about to: a full hold waits for it instead of refusing
	held          []heldLine // client lines waiting for a child, in order
	heldBytes     int
	owed          map[mcp.ID]bool        // ids the shim answered for the last dead child: its late answers are dropped
	clientPending map[mcp.ID]pendingCall // client requests forwarded to the current child
	serverPending map[mcp.ID]pendingCall // the current child's requests to the client
	deadServer    map[mcp.ID]string      // requests of dead children the client may still answer
	// The client's open subscriptions/listen streams while no child runs:
	// opened again on the next child, answered if none comes. A stream is
	// not a tool call; opening it twice does no work twice.
	listens []pendingCall
	// Streams opened again on this child: the client's stream never closed,
	// so the child's acknowledgement of each is not the client's to read.
	reopened map[mcp.ID]bool
}

// heldLine is a client line kept until a child is up; open marks the
// client's last bytes, which had no newline.
type heldLine struct {
	data []byte
	open bool
}

func newSession() *session {
	s := &session{clientPending: map[mcp.ID]pendingCall{}, serverPending: map[mcp.ID]pendingCall{}, deadServer: map[mcp.ID]string{}, owed: map[mcp.ID]bool{}, live: true}
	s.changed.L = &s.mu
	return s
}

// childState says where client messages go.
type childState uint8

const (
	starting childState = iota // no child yet, or one is being restarted: hold messages
	up                         // forward to the child
	gone                       // no child will come: the shim answers
)

// Bounds of the messages held while no child is up. While a child process
// runs (it is starting, or the held lines are being delivered to it) a full
// hold is backpressure: the client's line waits, and so does the client.
// Only across a restart, with no process to wait for, is a line past the
// bounds refused.
const (
	maxHeld      = 1024
	maxHeldBytes = 16 << 20
)

// routed is what routeClient decided for one line.
type routed struct {
	answer  []pendingCall // requests to answer with an error instead of forwarding
	late    []string      // late responses to a dead child's requests (ids), dropped
	held    bool          // kept until a child is up
	dropped bool          // a line that is not a request and could not be held
}

// fromClient registers the client's requests and settles its responses,
// before the line is written to the child. It reports whether the line
// should be forwarded; when it should not, r says why.
func (s *session) fromClient(l *jsonrpc.Line) (forward bool, r routed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == starting && s.live && l.Held && !s.room(len(l.Data)) {
		// Wait for the child to be up, not just for room: refilling the hold
		// line by line as it drains would send the whole stream through it.
		for s.state == starting && s.live {
			s.changed.Wait()
		}
	}
	if s.state != up {
		if s.state == starting && l.Held && s.room(len(l.Data)) {
			s.held = append(s.held, heldLine{data: append([]byte(nil), l.Data...), open: l.Unterminated})
			s.heldBytes += len(l.Data)
			return false, routed{held: true}
		}
		r.dropped = true
		each(&l.Msg, func(m *mcp.Msg) {
			if m.Kind == mcp.Request {
				r.answer = append(r.answer, newPending(m))
				r.dropped = false
			}
		})
		return false, r
	}
	return s.route(&l.Msg)
}

// room reports whether a line of n bytes may be held; s.mu is held.
func (s *session) room(n int) bool {
	return len(s.held) < maxHeld && s.heldBytes+n <= maxHeldBytes
}

// waitReady waits while a running child is being set up: a line too long to
// hold goes to it once the held lines before it were delivered.
func (s *session) waitReady() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.state == starting && s.live {
		s.changed.Wait()
	}
}

// spawned says a child process runs: lines wait for it rather than being
// refused. The dead child's owed ids are forgotten.
func (s *session) spawned() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = true
	s.owed = map[mcp.ID]bool{}
	s.changed.Broadcast()
}

func newPending(m *mcp.Msg) pendingCall {
	p := pendingCall{id: append([]byte(nil), m.RawID...), method: m.Method}
	switch m.Method {
	case mcp.MethodCallTool:
		p.tool = mcp.String(mcp.Member(m.Params, "name"))
	case mcp.MethodListen:
		p.params = append([]byte(nil), m.Params...)
	}
	return p
}

// route is fromClient for a running child; s.mu is held.
func (s *session) route(m *mcp.Msg) (forward bool, r routed) {
	forward = true
	each(m, func(m *mcp.Msg) {
		switch {
		case m.Kind == mcp.Request:
			p := newPending(m)
			if mcp.IsOwnID(m.ID) {
				r.answer = append(r.answer, p)
				forward = false
				return
			}
			s.clientPending[m.ID] = p
		case m.Kind == mcp.Notification && m.Method == mcp.NotificationCancelled:
			id, _ := mcp.ParseID(mcp.Member(m.Params, "requestId"))
			delete(s.clientPending, id)
		case m.IsResponse():
			if _, ok := s.serverPending[m.ID]; ok {
				delete(s.serverPending, m.ID)
			} else if _, ok := s.deadServer[m.ID]; ok {
				delete(s.deadServer, m.ID)
				r.late = append(r.late, string(m.RawID))
				forward = false
			}
		}
	})
	if m.Kind == mcp.Batch && !forward {
		// A batch is forwarded or not as a whole; anything registered is answered.
		for _, e := range m.Batch {
			if p, ok := s.clientPending[e.ID]; ok && e.Kind == mcp.Request {
				delete(s.clientPending, e.ID)
				r.answer = append(r.answer, p)
			}
		}
	}
	return forward, r
}

// pendingMethod is the method of the client's unanswered request id.
func (s *session) pendingMethod(id mcp.ID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientPending[id].method
}

// fromServer settles the client's requests and registers the child's own.
// For a single response it returns the method of the request it answers.
func (s *session) fromServer(m *mcp.Msg) (answered string, late bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.IsResponse() && s.owed[m.ID] {
		delete(s.owed, m.ID)
		return "", true
	}
	each(m, func(m *mcp.Msg) {
		switch {
		case m.IsResponse():
			answered = s.clientPending[m.ID].method
			delete(s.clientPending, m.ID)
		case m.Kind == mcp.Request:
			s.serverPending[m.ID] = pendingCall{id: append([]byte(nil), m.RawID...), method: m.Method}
		case m.Kind == mcp.Notification && m.Method == mcp.NotificationCancelled:
			id, _ := mcp.ParseID(mcp.Member(m.Params, "requestId"))
			if _, ok := s.serverPending[id]; ok {
				delete(s.serverPending, id) // the child withdrew its own request
			} else if p, ok := s.clientPending[id]; ok && p.method == mcp.MethodListen {
				// The server ended the client's subscription stream: nothing is owed at its death.
				delete(s.clientPending, id)
			}
		}
	})
	return answered, false
}

func each(m *mcp.Msg, f func(*mcp.Msg)) {
	if m.Kind == mcp.Batch {
		for i := range m.Batch {
			f(&m.Batch[i])
		}
		return
	}
	f(m)
}

// setUp delivers the held messages to a child that is ready, in order, and
// forwards from then on. Lines are taken one at a time under the lock but
// written without it: the child may need its stdout read (which takes the
// lock) before it reads more of its stdin. Messages that arrive meanwhile are
// held behind the others, so none overtakes a held one. Requests it answers
// instead of delivering are returned, with late responses it dropped.
//
// A line is handed to delivered (recorded) before it is written, as Route
// does for the others: recorded after, the child's fast answer could reach
// the ledger before its request.
func (s *session) setUp(write func(line []byte, open bool) error, delivered func([]byte)) (undelivered []pendingCall, late []string) {
	for {
		s.mu.Lock()
		if len(s.held) == 0 {
			s.state = up
			s.changed.Broadcast()
			s.mu.Unlock()
			return undelivered, late
		}
		h := s.held[0]
		s.held[0] = heldLine{}
		s.held = s.held[1:]
		s.heldBytes -= len(h.data)
		m := mcp.Peek(h.data)
		forward, r := s.route(&m)
		s.mu.Unlock()
		undelivered = append(undelivered, r.answer...)
		late = append(late, r.late...)
		if !forward {
			continue
		}
		delivered(h.data)
		// A failed write means the child died: its exit answers what it owed.
		_ = write(h.data, h.open)
	}
}

// close ends the session: no child will come. Held requests are returned
// to be answered; later ones are answered as they arrive.
func (s *session) close() (unanswered []pendingCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = gone
	s.live = false
	s.changed.Broadcast()
	unanswered = append(unanswered, s.listens...)
	s.listens = nil
	for _, h := range s.held {
		m := mcp.Peek(h.data)
		each(&m, func(m *mcp.Msg) {
			if m.Kind == mcp.Request {
				unanswered = append(unanswered, newPending(m))
			}
		})
	}
	s.held, s.heldBytes = nil, 0
	return unanswered
}

// down marks the child as gone and returns the client requests it left
// unanswered and its own requests the client is still working on, each in
// id order. Client messages are held from now on, until setUp or close.
func (s *session) down() (unanswered, withdrawn []pendingCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = starting
	s.live = false
	s.changed.Broadcast()
	unanswered = make([]pendingCall, 0, len(s.clientPending))
	for id, p := range s.clientPending {
		if p.method == mcp.MethodListen {
			s.listens = append(s.listens, p)
			continue
		}
		unanswered = append(unanswered, p)
		s.owed[id] = true
	}
	for id, p := range s.serverPending {
		s.deadServer[id] = p.method
		withdrawn = append(withdrawn, p)
	}
	s.clientPending = map[mcp.ID]pendingCall{}
	s.serverPending = map[mcp.ID]pendingCall{}
	byID := func(out []pendingCall) {
		sort.Slice(out, func(i, j int) bool { return string(out[i].id) < string(out[j].id) })
	}
	byID(unanswered)
	byID(withdrawn)
	return unanswered, withdrawn
}

// reopen takes the client's open subscription streams for the next child,
// registered as forwarded to it.
func (s *session) reopen() []pendingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.listens
	s.listens = nil
	s.reopened = map[mcp.ID]bool{}
	for _, p := range out {
		if id, ok := mcp.ParseID(p.id); ok {
			s.clientPending[id] = p
			s.reopened[id] = true
		}
	}
	return out
}

// reacknowledged reports whether m is the child's acknowledgement of a
// stream reopen gave it, once per stream: the client had its own already.
func (s *session) reacknowledged(m *mcp.Msg) bool {
	if m.Kind != mcp.Notification || m.Method != mcp.NotificationSubscriptionsAcknowledged {
		return false
	}
	id, ok := mcp.ParseID(mcp.Member(mcp.Member(m.Params, "_meta"), mcp.MetaSubscriptionID))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || !s.reopened[id] {
		return false
	}
	delete(s.reopened, id)
	return true
}
