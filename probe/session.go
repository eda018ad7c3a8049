package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
)

// transport carries JSON-RPC to one server. Answers arrive on channels so the
// session can wait on several requests and the deadline at once.
type transport interface {
	// send delivers a request; its answer, or the reason there will be none,
	// arrives exactly once on the returned channel.
	send(ctx context.Context, req request) <-chan answer
	// notify delivers a notification.
	notify(ctx context.Context, req request) error
	// delivered reports whether any request is known to have reached the server.
	delivered() bool
	// stop ends the exchange, stopping whatever was started, and records what
	// only the end reveals (exit status, stderr) in r.
	stop(r *Result)
}

type request struct {
	ID      int64 // 0 for a notification
	Method  string
	Params  any
	Version string // the Mcp-Protocol-Version header on HTTP; "" before negotiation
}

func (q request) encode() ([]byte, error) {
	msg := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id,omitempty"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", q.ID, q.Method, q.Params}
	return json.Marshal(msg)
}

type answer struct {
	at     time.Time
	result json.RawMessage
	rpcErr *rpcError
	err    error // no answer will come: the stream closed, the deadline passed...
}

// rpcError is a JSON-RPC error object; its message is reported verbatim.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// protocolError is a reply the probe cannot use.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// statusError is an HTTP status that is not a JSON-RPC answer.
type statusError struct {
	code         int
	status       string
	realm        string
	authenticate string // the WWW-Authenticate header
	location     string // a redirect's Location, query values hidden
}

func (e *statusError) Error() string {
	if e.location != "" {
		return "HTTP " + e.status + " to " + e.location + "; not followed"
	}
	return "HTTP " + e.status
}

// unreachableError is a connection that could not be made.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// session speaks MCP over a transport: the handshake in either era, every
// page of tools/list, and the canaries.
type session struct {
	target  Target
	opts    Options
	tr      transport
	r       *Result
	nextID  int64
	modern  bool
	caps    map[string]json.RawMessage // nil when the server sent none
	waiting string                     // the method a timeout would be reported against
	stage   string                     // the last confirmed event, for a timeout
}

// attempt is one probe of one server, between its start and its verdict.
type attempt struct {
	ctx    context.Context
	cancel context.CancelFunc
	t      Target
	opts   Options
	r      Result
	tr     transport // nil when the server could not be started
	// pid is the leader of the server's process group (0 for none): retries
	// store theirs here, where Run's gate reads it.
	pid *atomic.Int64
}

// begin starts an attempt: a stdio server is spawned here and its deadline
// starts now, so a caller that begins every attempt before finishing any
// gives every server its whole deadline from the probe's start.
func begin(ctx context.Context, t Target, opts Options) *attempt {
	a := &attempt{t: t, opts: opts, r: Result{Server: t.Name, Transport: "stdio", Started: time.Now(), Tools: []lock.Tool{}}, pid: new(atomic.Int64)}
	a.ctx, a.cancel = context.WithTimeout(ctx, opts.Timeout)
	if t.Remote() {
		a.r.Transport, a.r.url = "http", endpoint(t.URL)
		a.tr = newHTTPTransport(t)
		return a
	}
	deadline, _ := a.ctx.Deadline()
	p, err := startStdio(t, opts.Env, deadline, &a.r)
	if err != nil {
		a.r.Elapsed = time.Since(a.r.Started)
		st := Step{At: time.Now(), Event: "spawn_failed", Detail: err.Error()}
		var se *proc.SpawnError
		if errors.As(err, &se) {
			st.Class, st.Hint = se.Class, se.Hint
		}
		a.r.Timeline = append(a.r.Timeline, st)
		return a
	}
	a.tr = p
	a.pid.Store(int64(p.proc.Pid))
	return a
}

// finish holds the conversation and stops the server; retry judges it.
func (a *attempt) finish() Result {
	defer a.cancel()
	r := &a.r
	if a.tr == nil {
		return *r
	}
	s := &session{target: a.t, opts: a.opts, tr: a.tr, r: r, stage: SpawnedNoInitialize, waiting: mcp.MethodInitialize}
	err := s.run(a.ctx)
	r.Elapsed = time.Since(r.Started)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "deadline", Method: s.waiting})
	}
	a.cancel() // requests still in flight end now, not at the deadline
	s.record(err)
	a.tr.stop(r)
	return *r
}

// run drives the probe to a verdict: nil means READY.
func (s *session) run(ctx context.Context) error {
	if err := s.handshake(ctx); err != nil {
		return err
	}
	if err := s.listTools(ctx); err != nil {
		return err
	}
	return s.runCanaries(ctx)
}

// record puts on the timeline what the error that ended the probe says:
// the facts the verdict judges. The deadline and the answers the session
// read are on it already.
func (s *session) record(err error) {
	r := s.r
	var (
		rpcErr  *rpcError
		status  *statusError
		unreach *unreachableError
	)
	switch {
	case err == nil, errors.Is(err, errClosed), errors.As(err, &rpcErr):
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		r.LastEvent = s.stage
		if s.stage == SpawnedNoInitialize && s.tr.delivered() {
			r.LastEvent = InitializeReceivedNoResponse
		}
	case errors.As(err, &status):
		r.HTTPStatus, r.Realm = status.code, status.realm
		r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "http_status", Method: s.waiting, Code: status.code, Detail: cmp.Or(status.location, status.authenticate)})
	case errors.As(err, &unreach):
		r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "connect_failed", Detail: err.Error(), Class: "unreachable"})
	default:
		r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "protocol_error", Method: s.waiting, Detail: err.Error()})
	}
}

// send starts a request and records it on the timeline.
func (s *session) send(ctx context.Context, method string, params any, version string) <-chan answer {
	s.nextID++
	s.r.Timeline = append(s.r.Timeline, Step{At: time.Now(), Event: "request_sent", Method: method, Tool: toolOf(method, params)})
	return s.tr.send(ctx, request{ID: s.nextID, Method: method, Params: params, Version: version})
}

// toolOf is the tool a tools/call names: the ledger's records of a canary's
// call name it, as the shim's do.
func toolOf(method string, params any) string {
	p, _ := params.(map[string]any)
	if method != mcp.MethodCallTool || p == nil {
		return ""
	}
	name, _ := p["name"].(string)
	return name
}

// received records an answer on the timeline; a tools/call's with its tool
// and outcome.
func (s *session) received(method, tool string, a answer) {
	st := Step{At: a.at, Event: "response_received", Method: method, Tool: tool}
	switch {
	case a.err != nil:
		st.Event, st.Detail = "no_response", a.err.Error()
	case a.rpcErr != nil:
		st.Code, st.Detail = a.rpcErr.Code, "error: "+a.rpcErr.Message
	}
	if method == mcp.MethodCallTool && a.err == nil {
		st.Result = callOutcome(a)
	}
	s.r.Timeline = append(s.r.Timeline, st)
}

// call sends a request and waits for its answer or the deadline.
func (s *session) call(ctx context.Context, method string, params map[string]any) (answer, error) {
	s.waiting = method
	ch := s.send(ctx, method, s.withMeta(params), s.version())
	select {
	case a := <-ch:
		s.received(method, toolOf(method, params), a)
		if a.err != nil {
			return a, a.err
		}
		return a, nil
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

func (s *session) version() string {
	if s.modern {
		return mcp.ModernVersion
	}
	return s.r.Protocol
}

// clientInfo names the probe to servers.
var clientInfo = mcp.Implementation{Name: "mcpshim-probe", Version: "1"}

// probeInfo is clientInfo as the modern era's _meta carries it.
var probeInfo, _ = json.Marshal(clientInfo)

// era is what the probe's requests carry in version: the _meta of the
// modern era, complete (see mcp.Era.Params).
func era(version string) mcp.Era {
	return mcp.Era{Version: version, Modern: mcp.IsModern(version), ClientInfo: probeInfo}
}

// withMeta adds the modern era's per-request _meta to params.
func (s *session) withMeta(params map[string]any) map[string]any {
	if !s.modern {
		return params
	}
	return era(mcp.ModernVersion).Params(params)
}

// modernRefusal is a server/discover answer that shows a modern server
// without a version the probe speaks. 2026-07-28 (basic/versioning): "a
// recognized modern JSON-RPC error (such as UnsupportedProtocolVersionError)
// identifies a modern server: the client retries with a supported version
// rather than falling back"; the probe speaks one modern version, so there is
// nothing to retry with and nothing to fall back to.
func modernRefusal(a answer) error {
	if a.err != nil || a.rpcErr == nil || !mcp.IsModernError(a.rpcErr.Code) {
		return nil
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(a.rpcErr.Data, &d)
	if len(d.Supported) == 0 {
		return &protocolError{fmt.Sprintf("server/discover: a modern server refused it (error %d: %s)", a.rpcErr.Code, a.rpcErr.Message)}
	}
	return &protocolError{fmt.Sprintf("server/discover: the server is modern but supports %s, not %s (error %d: %s)",
		strings.Join(d.Supported, ", "), mcp.ModernVersion, a.rpcErr.Code, a.rpcErr.Message)}
}

// handshake negotiates an era: server/discover first, then initialize on an
// error or on no answer within a slice of the budget, as the official SDKs do.
// A late discover answer still wins over the initialize it raced.
func (s *session) handshake(ctx context.Context) error {
	forced := s.opts.Protocol
	var disc <-chan answer
	if forced == "" || forced >= mcp.ModernVersion {
		version := mcp.ModernVersion
		if forced != "" {
			version = forced
		}
		s.waiting = mcp.MethodDiscover
		disc = s.send(ctx, mcp.MethodDiscover, era(version).Params(nil), version)
		if forced != "" {
			select {
			case a := <-disc:
				s.received(mcp.MethodDiscover, "", a)
				if a.err != nil {
					return a.err
				}
				if a.rpcErr != nil {
					return a.rpcErr
				}
				return s.acceptDiscover(a, version)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		slice := min(time.Second, s.opts.Timeout/4)
		timer := time.NewTimer(slice)
		defer timer.Stop()
		select {
		case a := <-disc:
			s.received(mcp.MethodDiscover, "", a)
			if a.err != nil && fatal(a.err) {
				return a.err
			}
			if err := modernRefusal(a); err != nil {
				return err
			}
			if a.err == nil && a.rpcErr == nil {
				// A DiscoverResult: the server is modern whatever it lists.
				return s.acceptDiscover(a, mcp.ModernVersion)
			}
			disc = nil
		case <-timer.C:
			// Keep disc: a slow modern server may still answer it.
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	version := mcp.LegacyVersion
	if forced != "" {
		version = forced
	}
	s.waiting = mcp.MethodInitialize
	init := s.send(ctx, mcp.MethodInitialize, map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo,
	}, "")
	for {
		select {
		case a := <-init:
			s.received(mcp.MethodInitialize, "", a)
			if a.err != nil {
				return a.err
			}
			if a.rpcErr != nil {
				return a.rpcErr
			}
			if err := s.acceptInitialize(a); err != nil {
				return err
			}
			s.r.Timeline = append(s.r.Timeline, Step{At: time.Now(), Event: "notification_sent", Method: mcp.NotificationInitialized})
			return s.tr.notify(ctx, request{Method: mcp.NotificationInitialized, Version: s.r.Protocol})
		case a := <-disc:
			s.received(mcp.MethodDiscover, "", a)
			disc = nil
			if err := modernRefusal(a); err != nil {
				return err
			}
			if a.err == nil && a.rpcErr == nil {
				return s.acceptDiscover(a, mcp.ModernVersion)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fatal reports whether a failed server/discover ends the probe rather than
// falling back: a dead or garbled stream, no connection, or a refusal to
// authenticate would fail initialize the same way.
func fatal(err error) bool {
	var (
		unreach *unreachableError
		status  *statusError
	)
	switch {
	case errors.Is(err, errClosed), errors.As(err, &unreach):
		return true
	case errors.As(err, &status):
		return status.code == 401 || status.code == 403
	}
	return false
}

// acceptDiscover takes a server/discover result if the server speaks version.
func (s *session) acceptDiscover(a answer, version string) error {
	res, err := mcp.ParseDiscoverResult(a.result)
	if err != nil {
		return &protocolError{err.Error()}
	}
	found := false
	for _, v := range res.SupportedVersions {
		found = found || v == version
	}
	if !found {
		return &protocolError{fmt.Sprintf("server/discover: server supports %s, not %s", strings.Join(res.SupportedVersions, ", "), version)}
	}
	s.modern, s.r.Protocol, s.caps, s.r.ServerInfo = true, version, res.Capabilities, res.ServerInfo
	s.stage = ToolsListNoResponse
	return nil
}

func (s *session) acceptInitialize(a answer) error {
	res, err := mcp.ParseInitializeResult(a.result)
	if err != nil {
		return &protocolError{err.Error()}
	}
	s.r.Protocol, s.caps, s.r.ServerInfo = res.ProtocolVersion, res.Capabilities, res.ServerInfo
	s.stage = ToolsListNoResponse
	return nil
}

// listTools reads every page of tools/list. A server that declares
// capabilities without tools is not asked, as a client would not ask it.
func (s *session) listTools(ctx context.Context) error {
	if _, ok := s.caps["tools"]; s.caps != nil && !ok {
		s.r.Warnings = append(s.r.Warnings, "the server declares no tools capability")
		return nil
	}
	var pager mcp.Pager
	cursor, first := "", true
	for {
		a, err := s.call(ctx, mcp.MethodListTools, mcp.CursorParams(cursor, first))
		if err != nil {
			return err
		}
		if a.rpcErr != nil {
			return &protocolError{"tools/list: " + a.rpcErr.Message}
		}
		n := len(pager.Tools)
		next, more, err := pager.Add(a.result)
		if err != nil {
			return &protocolError{err.Error()}
		}
		for _, raw := range pager.Tools[n:] {
			t, err := lock.NewTool(raw)
			if err != nil {
				return &protocolError{fmt.Sprintf("tools/list: %v", err)}
			}
			s.r.Tools = append(s.r.Tools, t)
		}
		if !more {
			s.r.Timeline = append(s.r.Timeline, Step{At: time.Now(), Event: "tools_listed", Detail: fmt.Sprintf("%d tools", len(s.r.Tools))})
			s.stage = CanaryNoResponse
			return nil
		}
		cursor, first = next, false
	}
}
