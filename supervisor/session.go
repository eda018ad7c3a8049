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
	state         childState
	held          [][]byte // client lines waiting for a child, in order
	heldBytes     int
	clientPending map[string]pendingCall // client requests forwarded to the current child
	serverPending map[string]pendingCall // the current child's requests to the client
	deadServer    map[string]string      // requests of dead children the client may still answer
}

func newSession() *session {
	return &session{clientPending: map[string]pendingCall{}, serverPending: map[string]pendingCall{}, deadServer: map[string]string{}}
}

// childState says where client messages go.
type childState uint8

const (
	starting childState = iota // no child yet, or one is being restarted: hold messages
	up                         // forward to the child
	gone                       // no child will come: the shim answers
)

// Bounds of the messages held while a child starts.
const (
	maxHeld      = 1024
	maxHeldBytes = 16 << 20
)

// routed is what routeClient decided for one line.
type routed struct {
	answer  []pendingCall // requests to answer with an error instead of forwarding
	late    []string      // late responses to a dead child's requests (ids), dropped
	held    bool          // kept until a child is up
	dropped bool          // a notification that could not be held
}

// fromClient registers the client's requests and settles its responses,
// before the line is written to the child. It reports whether the line
// should be forwarded; when it should not, r says why.
func (s *session) fromClient(l *jsonrpc.Line) (forward bool, r routed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != up {
		if s.state == starting && l.Held && len(s.held) < maxHeld && s.heldBytes+len(l.Data) <= maxHeldBytes {
			s.held = append(s.held, append([]byte(nil), l.Data...))
			s.heldBytes += len(l.Data)
			return false, routed{held: true}
		}
		each(&l.Msg, func(m *jsonrpc.Msg) {
			switch m.Kind {
			case jsonrpc.Request:
				r.answer = append(r.answer, newPending(m))
			case jsonrpc.Notification:
				r.dropped = true
			}
		})
		return false, r
	}
	return s.route(&l.Msg)
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
func (s *session) fromServer(m *jsonrpc.Msg) (answered string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	each(m, func(m *jsonrpc.Msg) {
		switch {
		case m.IsResponse():
			answered = s.clientPending[string(m.ID)].method
			delete(s.clientPending, string(m.ID))
		case m.Kind == jsonrpc.Request:
			s.serverPending[string(m.ID)] = pendingCall{id: append([]byte(nil), m.ID...), method: m.Method}
		}
	})
	return answered
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
func (s *session) setUp(write func([]byte) error, delivered func([]byte)) (undelivered []pendingCall, late []string) {
	for {
		s.mu.Lock()
		if len(s.held) == 0 {
			s.state = up
			s.mu.Unlock()
			return undelivered, late
		}
		line := s.held[0]
		s.held = s.held[1:]
		s.heldBytes -= len(line)
		m := jsonrpc.Peek(line)
		forward, r := s.route(&m)
		s.mu.Unlock()
		undelivered = append(undelivered, r.answer...)
		late = append(late, r.late...)
		if !forward {
			continue
		}
		// A failed write means the child died: its exit answers what it owed.
		_ = write(line)
		delivered(line)
	}
}

// close ends the session: no child will come. Held requests are returned
// to be answered; later ones are answered as they arrive.
func (s *session) close() (unanswered []pendingCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = gone
	for _, line := range s.held {
		m := jsonrpc.Peek(line)
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
	out := make([]pendingCall, 0, len(s.clientPending))
	for _, p := range s.clientPending {
		out = append(out, p)
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
