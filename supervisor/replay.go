package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// memory is the session state a restarted child must be given again so the
// client's session survives: the handshake and what the client set since.
// Tool calls are never part of it: a call is never sent twice.
type memory struct {
	mu         sync.Mutex
	initParams []byte            // params of the client's initialize (legacy era)
	initID     string            // its id, to read the negotiated version from the answer
	version    string            // the negotiated (legacy) or per-request (modern) protocol version
	modern     bool              // the client speaks 2026-07-28: no handshake to replay
	setLevel   []byte            // params of the last logging/setLevel
	subscribed map[string][]byte // resources/subscribe params by uri
	listID     string            // id of the client's tools/list being answered
	pages      map[string]string // tool digests over the pages of that list
	surface    map[string]string // the last complete tool surface the client saw
}

// noteClient remembers what a forwarded client request sets for the session.
func (m *memory) noteClient(msg *jsonrpc.Msg) {
	if msg.Kind != jsonrpc.Request {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Copied only for what is kept: this runs on the relay's path for every request.
	params := func() []byte { return append([]byte(nil), msg.Params...) }
	switch msg.Method {
	case "initialize":
		m.initParams, m.initID, m.modern = params(), string(msg.ID), false
	case "logging/setLevel":
		m.setLevel = params()
	case "resources/subscribe", "resources/unsubscribe":
		uri := jsonrpc.String(jsonrpc.Member(msg.Params, "uri"))
		if m.subscribed == nil {
			m.subscribed = map[string][]byte{}
		}
		if msg.Method == "resources/subscribe" {
			m.subscribed[uri] = params()
		} else {
			delete(m.subscribed, uri)
		}
	case "tools/list":
		m.listID = string(msg.ID)
		if len(jsonrpc.Member(msg.Params, "cursor")) == 0 {
			m.pages = map[string]string{}
		}
	}
	if m.initParams == nil && m.version == "" {
		if v := metaVersion(msg.Params); v != "" {
			m.modern, m.version = true, v
		}
	}
}

// noteServer reads what the session needs from a child's answer: the
// negotiated version and the tool surface the client was shown. It runs
// after the line was forwarded.
func (m *memory) noteServer(l *jsonrpc.Line) {
	if !l.Msg.IsResponse() || l.Truncated {
		return
	}
	id := string(l.Msg.ID)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch id {
	case m.initID:
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(l.Msg.Result, &r) == nil && r.ProtocolVersion != "" {
			m.version = r.ProtocolVersion
		}
	case m.listID:
		next, ok := addPage(m.pages, l.Msg.Result)
		if ok && next == "" {
			m.surface, m.pages, m.listID = m.pages, nil, ""
		}
	}
}

// addPage adds one tools/list page's digests to pages and returns its nextCursor.
func addPage(pages map[string]string, result []byte) (next string, ok bool) {
	var r struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if pages == nil || json.Unmarshal(result, &r) != nil {
		return "", false
	}
	for _, raw := range r.Tools {
		if name, digest, err := phases.ToolDigest(raw); err == nil {
			pages[name] = digest
		}
	}
	return r.NextCursor, true
}

func metaVersion(params []byte) string {
	return jsonrpc.String(jsonrpc.Member(jsonrpc.Member(params, "_meta"), phases.ProtocolVersionMeta))
}

// ownCall sends one request of the shim's own to the child and waits for the
// answer, which the relay swallows (see routeServer).
func (s *Supervisor) ownCall(ctx context.Context, p *Process, method string, params []byte) (result []byte, rpcErr []byte, err error) {
	s.ownSeq++
	id := fmt.Sprintf(`"mcpshim-%d-%s"`, s.ownSeq, strings.ReplaceAll(method, "/", "-"))
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if len(params) > 0 {
		req += `,"params":` + string(params)
	}
	req += "}\n"
	if _, err := s.current.Write([]byte(req)); err != nil {
		return nil, nil, fmt.Errorf("%s: write: %w", method, err)
	}
	for {
		select {
		case line := <-s.own:
			m := jsonrpc.Peek(line)
			if string(m.ID) != id {
				continue // a late answer to an earlier call of ours
			}
			return m.Result, m.Error, nil
		case <-p.Exited():
			return nil, nil, fmt.Errorf("%s: the server exited before answering", method)
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
		}
	}
}

// replay gives a restarted child the session the client already has: the
// legacy handshake (under ids the client cannot have used, answers
// swallowed), the log level and subscriptions; then it lists the tools and
// tells the client when they changed. It returns an error when the child did
// not accept the handshake: that is a failed start.
func (s *Supervisor) replay(ctx context.Context, p *Process) error {
	m := &s.mem
	m.mu.Lock()
	initParams, version, modern, setLevel := m.initParams, m.version, m.modern, m.setLevel
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
	var replayed []string
	if !modern {
		res, rpcErr, err := s.ownCall(ctx, p, "initialize", initParams)
		if err != nil {
			return err
		}
		if rpcErr != nil {
			return fmt.Errorf("initialize refused: %s", rpcErr)
		}
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(res, &r)
		if version != "" && r.ProtocolVersion != version {
			return fmt.Errorf("initialize negotiated %q, the client's session has %q", r.ProtocolVersion, version)
		}
		if _, err := s.current.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			return fmt.Errorf("notifications/initialized: %w", err)
		}
		replayed = append(replayed, "initialize")
		if setLevel != nil {
			if _, _, err := s.ownCall(ctx, p, "logging/setLevel", setLevel); err == nil {
				replayed = append(replayed, "logging/setLevel")
			}
		}
		for _, sub := range subs {
			if _, _, err := s.ownCall(ctx, p, "resources/subscribe", sub); err == nil {
				replayed = append(replayed, "resources/subscribe")
			}
		}
	}
	s.emit(phases.Supervision, phases.HandshakeReplayed, phases.F("protocol_version", version), phases.F("modern", modern),
		phases.F("replayed", replayed), phases.F("latency_ms", time.Since(start)))
	if before != nil {
		s.compareTools(ctx, p, before, version, modern)
	}
	return nil
}

// compareTools lists the new child's tools and, when they differ from what
// the client last saw, tells the client with notifications/tools/list_changed.
func (s *Supervisor) compareTools(ctx context.Context, p *Process, before map[string]string, version string, modern bool) {
	after := map[string]string{}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if modern {
			params["_meta"] = map[string]string{phases.ProtocolVersionMeta: version}
		}
		b, _ := json.Marshal(params)
		res, rpcErr, err := s.ownCall(ctx, p, "tools/list", b)
		if err != nil || rpcErr != nil {
			return
		}
		next, ok := addPage(after, res)
		if !ok {
			return
		}
		if next == "" {
			break
		}
		cursor = next
	}
	var added, removed []string
	changed := false
	for n, d := range after {
		if old, ok := before[n]; !ok {
			added = append(added, n)
		} else if old != d {
			changed = true
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			removed = append(removed, n)
		}
	}
	if len(added) == 0 && len(removed) == 0 && !changed {
		return
	}
	sort.Strings(added)
	sort.Strings(removed)
	s.mem.mu.Lock()
	s.mem.surface = after
	s.mem.mu.Unlock()
	s.emit(phases.Supervision, phases.ToolsChangedAfterRestart, phases.F("added", added), phases.F("removed", removed), phases.F("definitions_changed", changed))
	if terminated, _ := s.client.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); terminated {
		s.emit(phases.Transport, phases.PartialLineTerminated)
	}
}
