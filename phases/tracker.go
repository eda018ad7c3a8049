package phases

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// Dir is the direction a line travelled.
type Dir uint8

const (
	FromClient Dir = iota // client stdin -> server stdin
	FromServer            // server stdout -> client stdout
)

func (d Dir) String() string {
	if d == FromClient {
		return "client"
	}
	return "server"
}

// ProtocolVersionMeta is the _meta key that carries the protocol version on
// every 2026-07-28 request, which has no handshake.
const ProtocolVersionMeta = "io.modelcontextprotocol/protocolVersion"

// Tracker turns observed traffic of one server into phase events. It keeps
// only what it needs to pair requests with responses; it never blocks.
// It is not safe for concurrent use.
type Tracker struct {
	// CaptureFull adds redacted bodies to request and response records.
	CaptureFull bool
	// HandshakeTimeout is how long after spawned a handshake may take.
	HandshakeTimeout time.Duration

	run       string
	pid       int
	spawnedAt time.Time
	lastEvent string
	deadline  time.Time // zero: no timeout pending

	hs        handshakeState
	earlyInit bool // notifications/initialized came before the initialize answer (a pipelining client)
	timedOut  bool
	pending   [2]map[mcp.ID]pendingReq // by direction of the request, keyed by id value
	listTools map[string]string        // tools seen over the pages of the current tools/list
	// Task-augmented calls whose task is still running, by task id. They
	// outlive a run: a restart loses them, and Exited says which.
	tasks map[string]taskCall
}

// taskCall is the tools/call a task was created for.
type taskCall struct {
	id   string // the call's request_id
	tool string
	at   time.Time
}

type handshakeState uint8

const (
	hsNone         handshakeState = iota
	hsInitReceived                // initialize or server/discover seen
	hsResponded                   // initialize answered, waiting for notifications/initialized
	hsDone
)

type pendingReq struct {
	id     string // as the requester spelled it: the ledger's request_id
	method string
	tool   string
	task   string // tasks/result: the task whose outcome it fetches
	at     time.Time
}

// Begin starts tracking a new run (a new child process, or a connection to
// a remote server) that event (spawned, connected) opened.
func (t *Tracker) Begin(run string, pid int, now time.Time, event string) {
	*t = Tracker{CaptureFull: t.CaptureFull, HandshakeTimeout: t.HandshakeTimeout, run: run, pid: pid, spawnedAt: now, tasks: t.tasks}
	t.pending = [2]map[mcp.ID]pendingReq{{}, {}}
	t.lastEvent = event // spawned, or connected for a remote server
	if t.HandshakeTimeout > 0 {
		t.deadline = now.Add(t.HandshakeTimeout)
	}
}

// Run is the current run id.
func (t *Tracker) Run() string { return t.run }

// PID is the current child's pid.
func (t *Tracker) PID() int { return t.pid }

// LastEvent is the last event confirmed in the current run.
func (t *Tracker) LastEvent() string { return t.lastEvent }

// HandshakeDone reports whether the current run completed a handshake.
func (t *Tracker) HandshakeDone() bool { return t.hs == hsDone }

// Deadline is when the handshake times out; ok is false when no timeout is pending.
func (t *Tracker) Deadline() (time.Time, bool) { return t.deadline, !t.deadline.IsZero() }

// Expire records handshake_timeout once when the deadline has passed. It
// observes; it does not kill (the client owns that decision).
func (t *Tracker) Expire(now time.Time) []ledger.Record {
	if t.deadline.IsZero() || now.Before(t.deadline) || t.hs == hsDone || t.timedOut {
		return nil
	}
	t.timedOut = true
	t.deadline = time.Time{}
	last := SpawnedNoInitialize
	switch t.hs {
	case hsInitReceived:
		last = InitializeReceivedNoResponse
	case hsResponded:
		last = ResponseSentNoInitialized
	}
	return []ledger.Record{t.rec(now, Handshake, HandshakeTimeout, ledger.F("last_event", last), ledger.F("timeout_ms", t.HandshakeTimeout))}
}

// Context describes where the run is, for evidence that arrives from
// outside the traffic (the egress witness): the phase, whether the handshake
// was done, and the tool calls in flight. With exactly one call in flight the
// attempt is on its behalf.
func (t *Tracker) Context() []ledger.Field {
	phase := Launch
	switch {
	case t.hs == hsDone:
		phase = Execution
		if len(t.pending[FromClient]) == 0 {
			phase = Discovery
		}
	case t.hs != hsNone:
		phase = Handshake
	}
	var ids, tools []string
	for _, p := range t.pending[FromClient] {
		if p.method == "tools/call" {
			ids = append(ids, p.id)
			tools = append(tools, p.tool)
		}
	}
	sort.Strings(ids)
	fields := []ledger.Field{ledger.F("run_phase", string(phase)), ledger.F("before_handshake", t.hs != hsDone), ledger.F("in_flight", ids)}
	if len(ids) == 1 {
		fields = append(fields, ledger.F("request_id", ids[0]), ledger.F("tool", tools[0]))
	}
	return fields
}

// Replayed marks the handshake done: the shim gave a restarted child the
// client's session itself.
func (t *Tracker) Replayed() {
	t.hs = hsDone
	t.deadline = time.Time{}
	t.lastEvent = HandshakeReplayed // the restarted server's last confirmed event, as an answer would be
}

// Stop ends the handshake deadline (the child is gone) and returns the ids
// of the tasks it took with it, sorted: a restarted server does not know them.
func (t *Tracker) Stop() (lostTasks []string) {
	t.deadline = time.Time{}
	for id := range t.tasks {
		lostTasks = append(lostTasks, id)
	}
	sort.Strings(lostTasks)
	t.tasks = nil
	return lostTasks
}

func (t *Tracker) rec(now time.Time, p Phase, event string, fields ...ledger.Field) ledger.Record {
	switch event {
	case StdoutNoise, ClientNoise, MessageTruncated, RequestReceived, RequestResponded, ToolsListChanged:
	default:
		t.lastEvent = event
	}
	return ledger.Record{Time: now, Run: t.run, PID: t.pid, Phase: p, Event: event, Fields: fields}
}

// Observe turns one relayed line into records.
func (t *Tracker) Observe(dir Dir, l *jsonrpc.Line) []ledger.Record {
	if t.pending[0] == nil {
		t.pending = [2]map[mcp.ID]pendingReq{{}, {}}
	}
	now := l.End
	if l.Unterminated && !l.Forwarded {
		return []ledger.Record{t.rec(now, Transport, PartialLineDropped, ledger.F("direction", dir.String()), ledger.F("bytes", l.Size),
			ledger.F("sha256", mcp.Sha256(l.Data)), ledger.F("preview", redact.Preview(l.Data, 120)))}
	}
	var out []ledger.Record
	if l.Truncated {
		out = append(out, t.rec(now, Transport, MessageTruncated, ledger.F("direction", dir.String()), ledger.F("bytes", l.Size), ledger.F("observed", len(l.Data))))
	}
	m := l.Msg
	if m.Kind != mcp.Noise && !l.Truncated && !mcp.Valid(l.Data) {
		m = mcp.Msg{} // looks like a message, is not JSON: a client parser fails on it too
	}
	switch m.Kind {
	case mcp.Noise:
		return append(out, t.noise(now, dir, l))
	case mcp.Batch:
		for i := range m.Batch {
			out = append(out, t.message(now, dir, &m.Batch[i], l)...)
		}
		return out
	}
	if out == nil {
		return t.message(now, dir, &m, l) // no copy: the common case
	}
	return append(out, t.message(now, dir, &m, l)...)
}

func (t *Tracker) noise(now time.Time, dir Dir, l *jsonrpc.Line) ledger.Record {
	ev := StdoutNoise
	if dir == FromClient {
		ev = ClientNoise
	}
	fields := []ledger.Field{ledger.F("bytes", l.Size), ledger.F("sha256", mcp.Sha256(l.Data)), ledger.F("preview", redact.Preview(l.Data, 120))}
	if !t.HandshakeDone() && dir == FromServer {
		fields = append(fields, ledger.F("before_handshake", true))
	}
	if !l.Forwarded {
		fields = append(fields, ledger.F("diverted", true)) // --divert-noise: the client never saw it
	}
	return t.rec(now, Transport, ev, fields...)
}

func (t *Tracker) body(l *jsonrpc.Line) []ledger.Field {
	if !t.CaptureFull {
		return nil
	}
	return []ledger.Field{ledger.F("body", redact.Preview(l.Data, len(l.Data)))}
}

func (t *Tracker) message(now time.Time, dir Dir, m *mcp.Msg, l *jsonrpc.Line) []ledger.Record {
	switch m.Kind {
	case mcp.Request:
		return t.request(now, dir, m, l)
	case mcp.Notification:
		return t.notification(now, dir, m)
	case mcp.Response, mcp.ErrorResponse:
		return t.response(now, dir, m, l)
	}
	return nil
}

func (t *Tracker) request(now time.Time, dir Dir, m *mcp.Msg, l *jsonrpc.Line) []ledger.Record {
	id := string(m.RawID)
	p := pendingReq{id: id, method: m.Method, at: now}
	var out []ledger.Record
	if dir == FromClient {
		switch m.Method {
		case "initialize":
			var params struct {
				ProtocolVersion string `json:"protocolVersion"`
				ClientInfo      struct{ Name, Version string }
			}
			_ = json.Unmarshal(m.Params, &params)
			t.hs = hsInitReceived
			out = append(out, t.rec(now, Handshake, InitializeReceived, append([]ledger.Field{ledger.F("request_id", id),
				ledger.F("protocol_version", params.ProtocolVersion), ledger.F("client_name", redact.String(params.ClientInfo.Name)),
				ledger.F("client_version", redact.String(params.ClientInfo.Version))}, t.body(l)...)...))
		case "server/discover":
			ver, client := metaInfo(m.Params)
			if t.hs != hsDone {
				t.hs = hsInitReceived
			}
			out = append(out, t.rec(now, Handshake, DiscoverReceived, ledger.F("request_id", id), ledger.F("protocol_version", ver), ledger.F("client_name", redact.String(client))))
		case "tools/list":
			if t.modern(now, m, &out); mcp.IsFirstPage(m.Params) {
				t.listTools = map[string]string{}
			}
			out = append(out, t.rec(now, Discovery, ToolsListReceived, ledger.F("request_id", id)))
		case "tools/call":
			t.modern(now, m, &out)
			p.tool = mcp.String(mcp.Member(m.Params, "name"))
			args := mcp.Member(m.Params, "arguments")
			ev := ToolCallReceived
			if mcp.IsContinuation(m.Params) {
				// MRTR: "the client retries the original request" with the input
				// asked for; the rounds are one call.
				ev = ToolCallContinued
			}
			fields := []ledger.Field{ledger.F("request_id", id), ledger.F("tool", p.tool), ledger.F("args_bytes", len(args)), ledger.F("args_sha256", mcp.Sha256(args))}
			if mcp.Member(m.Params, "task") != nil {
				fields = append(fields, ledger.F("task", true))
			}
			out = append(out, t.rec(now, Execution, ev, append(append(fields, traceparent(m.Params)...), t.body(l)...)...))
		case "tasks/result":
			t.modern(now, m, &out)
			p.task = mcp.String(mcp.Member(m.Params, "taskId"))
			out = append(out, t.rec(now, Execution, RequestReceived, append(append([]ledger.Field{ledger.F("request_id", id), ledger.F("method", m.Method),
				ledger.F("direction", dir.String())}, traceparent(m.Params)...), t.body(l)...)...))
		default:
			t.modern(now, m, &out)
			out = append(out, t.rec(now, Execution, RequestReceived, append(append([]ledger.Field{ledger.F("request_id", id), ledger.F("method", m.Method),
				ledger.F("direction", dir.String())}, traceparent(m.Params)...), t.body(l)...)...))
		}
	} else {
		out = append(out, t.rec(now, Execution, RequestReceived, append([]ledger.Field{ledger.F("request_id", id), ledger.F("method", m.Method), ledger.F("direction", dir.String())}, t.body(l)...)...))
	}
	t.pending[dir][m.ID] = p
	return out
}

// modern notes the first 2026-07-28 request of a run that had no handshake:
// that era has none, so the request itself completes it.
func (t *Tracker) modern(now time.Time, m *mcp.Msg, out *[]ledger.Record) {
	if t.hs == hsDone {
		return
	}
	ver, _ := metaInfo(m.Params)
	if ver == "" {
		return
	}
	t.hs = hsDone
	t.deadline = time.Time{}
	*out = append(*out, t.rec(now, Handshake, ModernRequest, ledger.F("method", m.Method), ledger.F("protocol_version", ver)))
}

// traceparent carries a request's W3C trace context (params._meta.traceparent)
// into the ledger, so an exported span joins the agent's own trace.
func traceparent(params []byte) []ledger.Field {
	tp := mcp.String(mcp.Member(mcp.Member(params, "_meta"), "traceparent"))
	if tp == "" || len(tp) > 64 {
		return nil
	}
	return []ledger.Field{ledger.F("traceparent", tp)}
}

func metaInfo(params []byte) (version, client string) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", ""
	}
	_ = json.Unmarshal(p.Meta[ProtocolVersionMeta], &version)
	var info struct{ Name string }
	_ = json.Unmarshal(p.Meta["io.modelcontextprotocol/clientInfo"], &info)
	return version, info.Name
}

func (t *Tracker) notification(now time.Time, dir Dir, m *mcp.Msg) []ledger.Record {
	switch {
	case dir == FromClient && m.Method == "notifications/initialized":
		switch t.hs {
		case hsResponded:
			t.hs = hsDone
			t.deadline = time.Time{}
		case hsInitReceived:
			t.earlyInit = true
		}
		return []ledger.Record{t.rec(now, Handshake, InitializedReceived)}
	case dir == FromServer && m.Method == "notifications/tools/list_changed":
		return []ledger.Record{t.rec(now, Discovery, ToolsListChanged)}
	case m.Method == "notifications/cancelled":
		// A side cancels a request it sent itself.
		reqID, _ := mcp.ParseID(mcp.Member(m.Params, "requestId"))
		p, ok := t.pending[dir][reqID]
		if !ok {
			return nil
		}
		delete(t.pending[dir], reqID)
		return []ledger.Record{t.rec(now, Execution, RequestCancelled, ledger.F("request_id", p.id), ledger.F("method", p.method),
			ledger.F("reason", mcp.String(mcp.Member(m.Params, "reason"))), ledger.F("latency_ms", now.Sub(p.at)))}
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (t *Tracker) response(now time.Time, dir Dir, m *mcp.Msg, l *jsonrpc.Line) []ledger.Record {
	reqDir := FromClient
	if dir == FromClient {
		reqDir = FromServer
	}
	p, ok := t.pending[reqDir][m.ID]
	if !ok {
		return []ledger.Record{t.rec(now, Transport, UnknownResponse, ledger.F("request_id", string(m.RawID)), ledger.F("direction", dir.String()))}
	}
	delete(t.pending[reqDir], m.ID)
	id := p.id // the request's spelling: the answer may re-spell the same id
	latency := ledger.F("latency_ms", now.Sub(p.at))
	var e rpcError
	failed := m.Kind == mcp.ErrorResponse
	if failed {
		_ = json.Unmarshal(m.Error, &e)
	}
	body := t.body(l)
	if reqDir == FromServer {
		return []ledger.Record{t.rec(now, Execution, RequestResponded, append([]ledger.Field{ledger.F("request_id", id), ledger.F("method", p.method),
			ledger.F("direction", reqDir.String()), ledger.F("outcome", mcp.Outcome(m)), ledger.F("code", e.Code), latency}, body...)...)}
	}
	switch p.method {
	case "initialize":
		if failed {
			return []ledger.Record{t.rec(now, Handshake, InitializeFailed, ledger.F("request_id", id), ledger.F("code", e.Code), ledger.F("message", redact.String(e.Message)), latency)}
		}
		var r struct {
			ProtocolVersion string                         `json:"protocolVersion"`
			ServerInfo      struct{ Name, Version string } `json:"serverInfo"`
			Capabilities    map[string]json.RawMessage     `json:"capabilities"`
		}
		_ = json.Unmarshal(m.Result, &r)
		t.hs = hsResponded
		if t.earlyInit {
			t.hs = hsDone
			t.deadline = time.Time{}
		}
		return []ledger.Record{t.rec(now, Handshake, InitializeResponded, append([]ledger.Field{ledger.F("request_id", id), ledger.F("protocol_version", r.ProtocolVersion),
			ledger.F("server_name", redact.String(r.ServerInfo.Name)), ledger.F("server_version", redact.String(r.ServerInfo.Version)), ledger.F("capabilities", keys(r.Capabilities)), latency}, body...)...)}
	case "server/discover":
		if failed {
			return []ledger.Record{t.rec(now, Handshake, DiscoverFailed, ledger.F("request_id", id), ledger.F("code", e.Code), ledger.F("message", redact.String(e.Message)), latency)}
		}
		var r struct {
			SupportedVersions []string                   `json:"supportedVersions"`
			Capabilities      map[string]json.RawMessage `json:"capabilities"`
			Meta              struct {
				ServerInfo struct{ Name, Version string } `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Result, &r)
		t.hs = hsDone
		t.deadline = time.Time{}
		return []ledger.Record{t.rec(now, Handshake, DiscoverResponded, ledger.F("request_id", id), ledger.F("supported_versions", r.SupportedVersions),
			ledger.F("server_name", redact.String(r.Meta.ServerInfo.Name)), ledger.F("server_version", redact.String(r.Meta.ServerInfo.Version)), ledger.F("capabilities", keys(r.Capabilities)), latency)}
	case "tools/list":
		if failed {
			return []ledger.Record{t.rec(now, Discovery, ToolsListFailed, ledger.F("request_id", id), ledger.F("code", e.Code), ledger.F("message", redact.String(e.Message)), latency)}
		}
		return []ledger.Record{t.toolsListed(now, id, m.Result, l, latency)}
	case "tools/call":
		// The outcome comes from the scanner, which read the whole line however long.
		oc := mcp.Outcome(m)
		fields := []ledger.Field{ledger.F("request_id", id), ledger.F("tool", p.tool), ledger.F("outcome", oc), latency, ledger.F("result_bytes", l.Size)}
		if failed {
			fields = append(fields, ledger.F("code", e.Code), ledger.F("message", redact.String(e.Message)))
		}
		ev := ToolCallResponded
		switch oc {
		case mcp.OutcomeInputRequired:
			ev = ToolCallInputRequired
		case mcp.OutcomeTaskCreated:
			// "the work goes on": the call ends with the task's tasks/result.
			ev = ToolCallTaskCreated
			if task := mcp.String(mcp.Member(mcp.Member(m.Result, "task"), "taskId")); task != "" {
				if t.tasks == nil {
					t.tasks = map[string]taskCall{}
				}
				t.tasks[task] = taskCall{id: id, tool: p.tool, at: p.at}
				fields = append(fields, ledger.F("task_id", task))
			}
		}
		return []ledger.Record{t.rec(now, Execution, ev, append(fields, body...)...)}
	case "tasks/result":
		if c, ok := t.tasks[p.task]; ok {
			// The task's outcome is the call's: the record links back to it.
			delete(t.tasks, p.task)
			fields := []ledger.Field{ledger.F("request_id", c.id), ledger.F("tool", c.tool), ledger.F("outcome", mcp.Outcome(m)), ledger.F("latency_ms", now.Sub(c.at)),
				ledger.F("result_bytes", l.Size), ledger.F("task_id", p.task), ledger.F("via_request_id", id)}
			if failed {
				fields = append(fields, ledger.F("code", e.Code), ledger.F("message", redact.String(e.Message)))
			}
			return []ledger.Record{t.rec(now, Execution, ToolCallResponded, append(fields, body...)...)}
		}
	}
	fields := []ledger.Field{ledger.F("request_id", id), ledger.F("method", p.method), ledger.F("direction", reqDir.String()), ledger.F("outcome", mcp.Outcome(m)), latency}
	if failed {
		fields = append(fields, ledger.F("code", e.Code))
	}
	return []ledger.Record{t.rec(now, Execution, RequestResponded, append(fields, body...)...)}
}

func (t *Tracker) toolsListed(now time.Time, id string, result []byte, l *jsonrpc.Line, latency ledger.Field) ledger.Record {
	r, err := mcp.ParseToolsPage(result)
	if l.Truncated || err != nil {
		return t.rec(now, Discovery, ToolsListResponded, ledger.F("request_id", id), ledger.F("complete", false), ledger.F("unparsed", true), latency)
	}
	if t.listTools == nil {
		t.listTools = map[string]string{}
	}
	invalid := 0
	for _, raw := range r.Tools {
		name, digest, err := mcp.ToolDigest(raw)
		if err != nil {
			invalid++
			continue
		}
		t.listTools[name] = digest
	}
	fields := []ledger.Field{ledger.F("request_id", id), ledger.F("page_tools", len(r.Tools))}
	if invalid > 0 {
		fields = append(fields, ledger.F("invalid_tools", invalid))
	}
	if r.More {
		return t.rec(now, Discovery, ToolsListResponded, append(fields, ledger.F("complete", false), latency)...)
	}
	names := make([]string, 0, len(t.listTools))
	for n := range t.listTools {
		names = append(names, n)
	}
	sort.Strings(names)
	digests := make([]ledger.Field, 0, len(names))
	for _, n := range names {
		digests = append(digests, ledger.F(n, t.listTools[n]))
	}
	fields = append(fields, ledger.F("complete", true), ledger.F("tool_count", len(names)), ledger.F("tools", names),
		ledger.F("tool_digests", digests), ledger.F("surface_sha256", mcp.SurfaceDigest(t.listTools)), latency)
	if len(names) == 0 {
		fields = append(fields, ledger.F("warning", "zero tools: the server is connected but offers nothing to call"))
	}
	t.listTools = nil
	return t.rec(now, Discovery, ToolsListResponded, fields...)
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
