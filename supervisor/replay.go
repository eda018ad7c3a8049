package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// memory is the session state a restarted child must be given again so the
// client's session survives: the handshake and what the client set since.
// Tool calls are never part of it: a call is never sent twice.
type memory struct {
	mu         sync.Mutex
	initParams []byte            // params of the client's initialize (legacy era)
	initID     mcp.ID            // its id, to read the negotiated version from the answer
	version    string            // the negotiated (legacy) or per-request (modern) protocol version
	modern     bool              // the client speaks 2026-07-28: no handshake to replay
	era        mcp.Era           // what the shim's own requests carry (modern: the client's _meta)
	lastMeta   []byte            // the _meta era was read from: most requests repeat it byte for byte
	setLevel   []byte            // params of the last logging/setLevel
	subscribed map[string][]byte // resources/subscribe params by uri
	listID     mcp.ID            // id of the client's tools/list being answered
	pages      map[string]string // tool digests over the pages of that list
	surface    map[string]string // the last complete tool surface the client saw
	// Who asked for notifications/tools/list_changed. 2026-07-28: "The server
	// MUST NOT send notification types the client has not explicitly
	// requested"; a legacy server sends it only when it declared
	// tools.listChanged, so the shim does no more than the server would.
	listChanged bool   // legacy: the server declared capabilities.tools.listChanged
	listenID    mcp.ID // modern: the open subscriptions/listen that asked for toolsListChanged
	listenRaw   []byte // its id as the client spelled it: the subscriptionId
}

// noteClient remembers what a forwarded client request sets for the session.
func (m *memory) noteClient(msg *mcp.Msg) {
	if msg.Kind == mcp.Notification && msg.Method == mcp.NotificationCancelled {
		id, _ := mcp.ParseID(mcp.Member(msg.Params, "requestId"))
		m.endListen(id) // the client closed its subscription stream
		return
	}
	if msg.Kind != mcp.Request {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Copied only for what is kept: this runs on the relay's path for every request.
	params := func() []byte { return append([]byte(nil), msg.Params...) }
	switch msg.Method {
	case mcp.MethodInitialize:
		m.initParams, m.initID, m.modern = params(), msg.ID, false
		m.era = mcp.Era{Version: mcp.String(mcp.Member(msg.Params, "protocolVersion"))}
	case mcp.MethodSetLevel:
		m.setLevel = params()
	case mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		uri := mcp.String(mcp.Member(msg.Params, "uri"))
		if m.subscribed == nil {
			m.subscribed = map[string][]byte{}
		}
		if msg.Method == mcp.MethodSubscribe {
			m.subscribed[uri] = params()
		} else {
			delete(m.subscribed, uri)
		}
	case mcp.MethodListTools:
		m.listID = msg.ID
		if mcp.IsFirstPage(msg.Params) {
			m.pages = map[string]string{}
		}
	case mcp.MethodListen:
		if string(mcp.Member(mcp.Member(msg.Params, "notifications"), "toolsListChanged")) == "true" {
			m.listenID, m.listenRaw = msg.ID, append([]byte(nil), msg.RawID...)
		}
	}
	if meta := mcp.Member(msg.Params, "_meta"); m.initParams == nil && meta != nil && !bytes.Equal(meta, m.lastMeta) {
		if e, ok := mcp.ModernEra(msg.Params); ok {
			// The latest request's fields: the shim's own requests speak as the client does now.
			m.modern, m.version, m.era = true, e.Version, e
			m.lastMeta = append(m.lastMeta[:0], meta...)
		}
	}
}

// endListen forgets the client's subscription stream id once it was
// answered, cancelled or ended by the server.
func (m *memory) endListen(id mcp.ID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.listenID.IsZero() && m.listenID == id {
		m.listenID, m.listenRaw = mcp.ID{}, nil
	}
}

// noteServer reads what the session needs from a child's answer: the
// negotiated version and the tool surface the client was shown. It runs
// after the line was forwarded.
func (m *memory) noteServer(l *jsonrpc.Line) {
	if !l.Msg.IsResponse() {
		return
	}
	m.endListen(l.Msg.ID)
	if l.Truncated {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case l.Msg.ID.IsZero():
	case l.Msg.ID == m.initID:
		if r, err := mcp.ParseInitializeResult(l.Msg.Result); err == nil && r.ProtocolVersion != "" {
			m.version, m.era.Version = r.ProtocolVersion, r.ProtocolVersion
			m.listChanged = r.ToolsListChanged()
		}
	case l.Msg.ID == m.listID:
		page, err := mcp.ParseToolsPage(l.Msg.Result)
		if err != nil || m.pages == nil {
			return
		}
		addPage(m.pages, page)
		if !page.More {
			m.surface, m.pages, m.listID = m.pages, nil, mcp.ID{}
		}
	}
}

// addPage adds one tools/list page's digests to pages.
func addPage(pages map[string]string, page mcp.ToolsPage) {
	for _, raw := range page.Tools {
		if name, digest, err := mcp.ToolDigest(raw); err == nil {
			pages[name] = digest
		}
	}
}

// ownCall sends one request of the shim's own to the child and waits for the
// answer, which the relay swallows (see routeServer).
//
// req builds the request line for the id it is given.
func (s *Supervisor) ownCall(ctx context.Context, c *child, method string, req func(mcp.ID) ([]byte, error)) (result []byte, rpcErr []byte, err error) {
	s.ownSeq++
	id := mcp.OwnID(s.ownSeq, method)
	line, err := req(id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.p.Stdin.Write(append(line, '\n')); err != nil {
		return nil, nil, fmt.Errorf("%s: write: %w", method, err)
	}
	for {
		select {
		case line := <-c.own:
			m := mcp.Peek(line)
			if m.ID != id {
				continue // a late answer to an earlier call of ours
			}
			return m.Result, m.Error, nil
		case <-c.p.Exited():
			return nil, nil, fmt.Errorf("%s: the server exited before answering", method)
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
		}
	}
}

// replayError is a replay that failed: the method it failed at, and the
// replay's deadline when that is what passed.
type replayError struct {
	method  string
	timeout time.Duration
	err     error
}

func (e *replayError) Error() string {
	if e.timeout > 0 {
		return fmt.Sprintf("%s: no answer within %v", e.method, e.timeout)
	}
	return e.err.Error()
}

func (e *replayError) Unwrap() error { return e.err }

// replay gives a restarted child the session the client already has: the
// legacy handshake (under ids the client cannot have used, answers
// swallowed), the log level and subscriptions; then it lists the tools and
// tells the client when they changed. It returns an error when the child did
// not accept the handshake: that is a failed start.
func (s *Supervisor) replay(ctx context.Context, c *child) error {
	m := &s.mem
	m.mu.Lock()
	initParams, version, modern, setLevel, era := m.initParams, m.version, m.modern, m.setLevel, m.era
	subs := make([][]byte, 0, len(m.subscribed))
	for _, v := range m.subscribed {
		subs = append(subs, v)
	}
	before := m.surface
	m.mu.Unlock()
	if initParams == nil && !modern {
		return nil // the client never shook hands: nothing to give back
	}
	timeout := s.cfg.ReplayTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	fail := func(method string, err error) error {
		re := &replayError{method: method, err: err}
		if errors.Is(err, context.DeadlineExceeded) {
			re.timeout = timeout
		}
		return re
	}
	var replayed []string
	if !modern {
		res, rpcErr, err := s.ownCall(ctx, c, mcp.MethodInitialize, raw(mcp.MethodInitialize, initParams))
		if err != nil {
			return fail(mcp.MethodInitialize, err)
		}
		if rpcErr != nil {
			return fail(mcp.MethodInitialize, fmt.Errorf("initialize refused: %s", rpcErr))
		}
		r, _ := mcp.ParseInitializeResult(res)
		if version != "" && r.ProtocolVersion != version {
			return fail(mcp.MethodInitialize, fmt.Errorf("initialize negotiated %q, the client's session has %q", r.ProtocolVersion, version))
		}
		if _, err := c.p.Stdin.Write(append(mcp.NotificationLine(mcp.NotificationInitialized), '\n')); err != nil {
			return fail(mcp.NotificationInitialized, fmt.Errorf("notifications/initialized: %w", err))
		}
		replayed = append(replayed, mcp.MethodInitialize)
		if setLevel != nil {
			if _, _, err := s.ownCall(ctx, c, mcp.MethodSetLevel, raw(mcp.MethodSetLevel, setLevel)); err == nil {
				replayed = append(replayed, mcp.MethodSetLevel)
			}
		}
		for _, sub := range subs {
			if _, _, err := s.ownCall(ctx, c, mcp.MethodSubscribe, raw(mcp.MethodSubscribe, sub)); err == nil {
				replayed = append(replayed, mcp.MethodSubscribe)
			}
		}
	}
	// The client's subscription streams, under its own ids: the new child's
	// notifications carry the subscriptionId the client knows, and the answer
	// that ends a stream goes to the client.
	for _, l := range s.sess.reopen() {
		if _, err := c.p.Stdin.Write(append(mcp.RawRequest(l.id, mcp.MethodListen, l.params), '\n')); err != nil {
			return fail(mcp.MethodListen, fmt.Errorf("subscriptions/listen: %w", err))
		}
		replayed = append(replayed, mcp.MethodListen)
	}
	s.emit(phases.Supervision, phases.HandshakeReplayed, ledger.F(phases.FieldProtocolVersion, version), ledger.F("modern", modern),
		ledger.F("replayed", replayed), ledger.F(phases.FieldLatencyMS, time.Since(start)))
	if before != nil {
		s.compareTools(ctx, c, before, era)
	}
	return nil
}

// raw is a request of the client's own params, replayed as they were.
func raw(method string, params []byte) func(mcp.ID) ([]byte, error) {
	return func(id mcp.ID) ([]byte, error) { return mcp.RawRequest([]byte(id.String()), method, params), nil }
}

// compareTools lists the new child's tools and, when they differ from what
// the client last saw, tells the client with notifications/tools/list_changed
// if it asked for that notification.
func (s *Supervisor) compareTools(ctx context.Context, c *child, before map[string]string, era mcp.Era) {
	after := map[string]string{}
	var pager mcp.Pager
	cursor, first := "", true
	for {
		res, rpcErr, err := s.ownCall(ctx, c, mcp.MethodListTools, func(id mcp.ID) ([]byte, error) {
			return era.Request(id, mcp.MethodListTools, mcp.CursorParams(cursor, first))
		})
		if err != nil || rpcErr != nil {
			s.emit(phases.Supervision, phases.ReplayFailed, ledger.F(phases.FieldMethod, mcp.MethodListTools), ledger.F(phases.FieldError, ownError(err, rpcErr)))
			return
		}
		next, more, err := pager.Add(res)
		if err != nil {
			s.emit(phases.Supervision, phases.ReplayFailed, ledger.F(phases.FieldMethod, mcp.MethodListTools), ledger.F(phases.FieldError, err.Error()))
			return
		}
		if !more {
			break
		}
		cursor, first = next, false
	}
	for _, raw := range pager.Tools {
		if name, digest, err := mcp.ToolDigest(raw); err == nil {
			after[name] = digest
		}
	}
	added, removed, changed := mcp.DiffTools(before, after)
	if len(added) == 0 && len(removed) == 0 && !changed {
		return
	}
	s.mem.mu.Lock()
	s.mem.surface = after
	note := s.mem.listChangedNote(era.Modern)
	s.mem.mu.Unlock()
	s.emit(phases.Supervision, phases.ToolsChangedAfterRestart, ledger.F("added", added), ledger.F("removed", removed),
		ledger.F("definitions_changed", changed), ledger.F("client_notified", note != nil))
	if note == nil {
		return
	}
	if terminated, _ := s.client.WriteMessage(note); terminated {
		s.emit(phases.Transport, phases.PartialLineTerminated)
	}
}

// listChangedNote is the notifications/tools/list_changed the client asked
// for, or nil. On stdio a modern client correlates it by subscriptionId:
// "the server MUST include io.modelcontextprotocol/subscriptionId in _meta
// so the client can correlate the notification with the originating
// subscription request". m.mu is held.
func (m *memory) listChangedNote(modern bool) []byte {
	switch {
	case !modern && m.listChanged:
		return mcp.ToolsListChanged(nil)
	case modern && m.listenRaw != nil:
		return mcp.ToolsListChanged(m.listenRaw)
	}
	return nil
}

func ownError(err error, rpcErr []byte) string {
	if err != nil {
		return err.Error()
	}
	return string(rpcErr)
}
