package supervisor

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
)

// ServerErrorCode is the JSON-RPC code of the errors the shim answers with.
const ServerErrorCode = -32000

// ownIDPrefix marks ids of requests the shim itself sends to a child (replayed
// handshakes, its own tools/list). A client cannot have used them: the shim
// checks every client id against the prefix.
const ownIDPrefix = `"mcpshim-`

// pendingCall is a request that has not been answered yet.
type pendingCall struct {
	id     []byte
	method string
	tool   string
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
	owed          map[string]bool        // ids the shim answered for the last dead child: its late answers are dropped
	clientPending map[string]pendingCall // client requests forwarded to the current child
	serverPending map[string]pendingCall // the current child's requests to the client
	deadServer    map[string]string      // requests of dead children the client may still answer
}

// heldLine is a client line kept until a child is up; open marks the
// client's last bytes, which had no newline.
type heldLine struct {
	data []byte
	open bool
}

func newSession() *session {
	s := &session{clientPending: map[string]pendingCall{}, serverPending: map[string]pendingCall{}, deadServer: map[string]string{}, owed: map[string]bool{}, live: true}
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
		each(&l.Msg, func(m *jsonrpc.Msg) {
			if m.Kind == jsonrpc.Request {
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
	s.owed = map[string]bool{}
	s.changed.Broadcast()
}

func newPending(m *jsonrpc.Msg) pendingCall {
	p := pendingCall{id: append([]byte(nil), m.ID...), method: m.Method}
	if m.Method == "tools/call" {
		p.tool = jsonrpc.String(jsonrpc.Member(m.Params, "name"))
	}
	return p
}

// route is fromClient for a running child; s.mu is held.
func (s *session) route(m *jsonrpc.Msg) (forward bool, r routed) {
	forward = true
	each(m, func(m *jsonrpc.Msg) {
		switch {
		case m.Kind == jsonrpc.Request:
			p := newPending(m)
			if strings.HasPrefix(string(m.ID), ownIDPrefix) {
				r.answer = append(r.answer, p)
				forward = false
				return
			}
			s.clientPending[string(m.ID)] = p
		case m.Kind == jsonrpc.Notification && m.Method == "notifications/cancelled":
			delete(s.clientPending, string(jsonrpc.Member(m.Params, "requestId")))
		case m.IsResponse():
			id := string(m.ID)
			if _, ok := s.serverPending[id]; ok {
				delete(s.serverPending, id)
			} else if _, ok := s.deadServer[id]; ok {
				delete(s.deadServer, id)
				r.late = append(r.late, id)
				forward = false
			}
		}
	})
	if m.Kind == jsonrpc.Batch && !forward {
		// A batch is forwarded or not as a whole; anything registered is answered.
		for _, e := range m.Batch {
			if p, ok := s.clientPending[string(e.ID)]; ok && e.Kind == jsonrpc.Request {
				delete(s.clientPending, string(e.ID))
				r.answer = append(r.answer, p)
			}
		}
	}
	return forward, r
}

// pendingMethod is the method of the client's unanswered request id.
func (s *session) pendingMethod(id []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientPending[string(id)].method
}

// fromServer settles the client's requests and registers the child's own.
// For a single response it returns the method of the request it answers.
// late is set for a single response to a request the shim already
// answered itself, when the child was declared dead: it must not be a second answer.
func (s *session) fromServer(m *jsonrpc.Msg) (answered string, late bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.IsResponse() && s.owed[string(m.ID)] {
		delete(s.owed, string(m.ID))
		return "", true
	}
	each(m, func(m *jsonrpc.Msg) {
		switch {
		case m.IsResponse():
			answered = s.clientPending[string(m.ID)].method
			delete(s.clientPending, string(m.ID))
		case m.Kind == jsonrpc.Request:
			s.serverPending[string(m.ID)] = pendingCall{id: append([]byte(nil), m.ID...), method: m.Method}
		}
	})
	return answered, false
}

func each(m *jsonrpc.Msg, f func(*jsonrpc.Msg)) {
	if m.Kind == jsonrpc.Batch {
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
		m := jsonrpc.Peek(h.data)
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
	for _, h := range s.held {
		m := jsonrpc.Peek(h.data)
		each(&m, func(m *jsonrpc.Msg) {
			if m.Kind == jsonrpc.Request {
				unanswered = append(unanswered, newPending(m))
			}
		})
	}
	s.held, s.heldBytes = nil, 0
	return unanswered
}

// down marks the child as gone and returns the client requests it left
// unanswered, in id order. Client messages are held from now on, until
// setUp or close.
func (s *session) down() []pendingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = starting
	s.live = false
	s.changed.Broadcast()
	out := make([]pendingCall, 0, len(s.clientPending))
	for id, p := range s.clientPending {
		out = append(out, p)
		s.owed[id] = true
	}
	for id, p := range s.serverPending {
		s.deadServer[id] = p.method
	}
	s.clientPending = map[string]pendingCall{}
	s.serverPending = map[string]pendingCall{}
	sort.Slice(out, func(i, j int) bool { return string(out[i].id) < string(out[j].id) })
	return out
}

// errorResponse is the JSON-RPC error the shim owes the client for a request
// the server can no longer answer.
func errorResponse(id []byte, message string, data map[string]any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data,omitempty"`
	}{ServerErrorCode, message, data}})
	if err != nil {
		// The id came from a line Peek accepted but is not valid JSON: answer with null.
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, ServerErrorCode, message))
	}
	return b
}
