// Package tap turns what the relay observed into phase events: the tracker
// that pairs requests with answers and follows the handshake, and the
// recorder that hands its records to the ledger off the relay's path. It
// never touches the filesystem (that is ledger's) and never judges a run
// (that is verdict's).
package tap

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

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
	out   []ledger.Record // what Observe and Expire return; see one

	// The last Observe's request whose record may make way for its answer's
	// line (see Recorded), and the record its answer made way for.
	asked    mcp.ID
	askedDir phases.Dir
	askedOK  bool
	answered uint64
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
	seq    uint64 // its record's, when its event line may be left out (see Answered)
	id     string // as the requester spelled it: the ledger's request_id
	method string
	tool   string
	task   string // tasks/result: the task whose outcome it fetches
	at     time.Time
}

// Begin starts tracking a new run (a new child process, or a connection to
// a remote server) that event (spawned, connected) opened.
func (t *Tracker) Begin(run string, pid int, now time.Time, event string) {
	*t = Tracker{CaptureFull: t.CaptureFull, HandshakeTimeout: t.HandshakeTimeout, run: run, pid: pid, spawnedAt: now, tasks: t.tasks, out: t.out}
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
// observes; it does not kill (the client owns that decision). The slice
// returned is the tracker's, valid until its next call, as Observe's.
func (t *Tracker) Expire(now time.Time) []ledger.Record {
	if t.deadline.IsZero() || now.Before(t.deadline) || t.hs == hsDone || t.timedOut {
		return nil
	}
	t.timedOut = true
	t.deadline = time.Time{}
	last := phases.SpawnedNoInitialize
	switch t.hs {
	case hsInitReceived:
		last = phases.InitializeReceivedNoResponse
	case hsResponded:
		last = phases.ResponseSentNoInitialized
	}
	return t.one(t.rec(now, phases.Handshake, phases.HandshakeTimeout, ledger.F(phases.FieldLastEvent, last), ledger.F(phases.FieldTimeoutMS, t.HandshakeTimeout)))
}

// Context describes where the run is, for evidence that arrives from
// outside the traffic (the egress witness): the phase, whether the handshake
// was done, and the tool calls in flight. With exactly one call in flight the
// attempt is on its behalf.
func (t *Tracker) Context() []ledger.Field {
	phase := phases.Launch
	switch {
	case t.hs == hsDone:
		phase = phases.Execution
		if len(t.pending[phases.FromClient]) == 0 {
			phase = phases.Discovery
		}
	case t.hs != hsNone:
		phase = phases.Handshake
	}
	var ids, tools []string
	for _, p := range t.pending[phases.FromClient] {
		if p.method == mcp.MethodCallTool {
			ids = append(ids, p.id)
			tools = append(tools, p.tool)
		}
	}
	sort.Strings(ids)
	fields := []ledger.Field{ledger.F("run_phase", string(phase)), ledger.F("before_handshake", t.hs != hsDone), ledger.F("in_flight", ids)}
	if len(ids) == 1 {
		fields = append(fields, ledger.F(phases.FieldRequestID, ids[0]), ledger.F(phases.FieldTool, tools[0]))
	}
	return fields
}

// Replayed marks the handshake done: the shim gave a restarted child the
// client's session itself.
func (t *Tracker) Replayed() {
	t.hs = hsDone
	t.deadline = time.Time{}
	t.lastEvent = phases.HandshakeReplayed // the restarted server's last confirmed event, as an answer would be
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

// one is r as the tracker's own slice, reused by the next call: a message
// costs no allocation for the slice of its record. Not inlined: its append
// at each of its call sites grew the binary by 3 KB.
//
//go:noinline
func (t *Tracker) one(r ledger.Record) []ledger.Record {
	t.out = append(t.out[:0], r)
	return t.out
}

func (t *Tracker) rec(now time.Time, p phases.Phase, event string, fields ...ledger.Field) ledger.Record {
	switch event {
	case phases.StdoutNoise, phases.ClientNoise, phases.MessageTruncated, phases.RequestReceived, phases.RequestResponded, phases.ToolsListChanged:
	default:
		t.lastEvent = event
	}
	return ledger.Record{Time: now, Run: t.run, PID: t.pid, Phase: p, Event: event, Fields: fields}
}

// Observe turns one relayed line into records. The slice returned is the
// tracker's, valid until its next call: write the records before.
func (t *Tracker) Observe(dir phases.Dir, l *Observation) []ledger.Record {
	if t.pending[0] == nil {
		t.pending = [2]map[mcp.ID]pendingReq{{}, {}}
	}
	now := l.End
	t.askedOK, t.answered = false, 0
	if l.Unterminated && !l.Forwarded {
		return t.one(t.rec(now, phases.Transport, phases.PartialLineDropped, ledger.F(phases.FieldDirection, dir.String()), ledger.F("bytes", l.Size),
			ledger.F("sha256", mcp.Sha256(l.Data)), ledger.F(phases.FieldPreview, redact.Preview(l.Data, 120))))
	}
	var out []ledger.Record
	if l.Truncated {
		out = append(out, t.rec(now, phases.Transport, phases.MessageTruncated, ledger.F(phases.FieldDirection, dir.String()), ledger.F("bytes", l.Size), ledger.F("observed", len(l.Data))))
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
		t.askedOK, t.answered = false, 0 // a batch's lines stay: only single messages pair
		return out
	}
	if out == nil {
		return t.message(now, dir, &m, l) // no copy: the common case
	}
	return append(out, t.message(now, dir, &m, l)...)
}

func (t *Tracker) noise(now time.Time, dir phases.Dir, l *Observation) ledger.Record {
	ev := phases.StdoutNoise
	if dir == phases.FromClient {
		ev = phases.ClientNoise
	}
	fields := []ledger.Field{ledger.F("bytes", l.Size), ledger.F("sha256", mcp.Sha256(l.Data)), ledger.F(phases.FieldPreview, redact.Preview(l.Data, 120))}
	if !t.HandshakeDone() && dir == phases.FromServer {
		fields = append(fields, ledger.F("before_handshake", true))
	}
	if !l.Forwarded {
		fields = append(fields, ledger.F(phases.FieldDiverted, true)) // --divert-noise: the client never saw it
	}
	return t.rec(now, phases.Transport, ev, fields...)
}

func (t *Tracker) body(l *Observation) []ledger.Field {
	if !t.CaptureFull {
		return nil
	}
	return []ledger.Field{ledger.F("body", redact.Preview(l.Data, len(l.Data)))}
}

func (t *Tracker) message(now time.Time, dir phases.Dir, m *mcp.Msg, l *Observation) []ledger.Record {
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

func (t *Tracker) request(now time.Time, dir phases.Dir, m *mcp.Msg, l *Observation) []ledger.Record {
	id := string(m.RawID)
	p := pendingReq{id: id, method: m.Method, at: now}
	out := t.out[:0]
	if dir == phases.FromClient {
		switch m.Method {
		case mcp.MethodInitialize:
			ver, client := mcp.InitializeParams(m.Params)
			t.hs = hsInitReceived
			out = append(out, t.rec(now, phases.Handshake, phases.InitializeReceived, append([]ledger.Field{ledger.F(phases.FieldRequestID, id),
				ledger.F(phases.FieldProtocolVersion, ver), ledger.F("client_name", redact.String(client.Name)),
				ledger.F("client_version", redact.String(client.Version))}, t.body(l)...)...))
		case mcp.MethodDiscover:
			ver, client := mcp.RequestMeta(m.Params)
			if t.hs != hsDone {
				t.hs = hsInitReceived
			}
			out = append(out, t.rec(now, phases.Handshake, phases.DiscoverReceived, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldProtocolVersion, ver), ledger.F("client_name", redact.String(client.Name))))
		case mcp.MethodListTools:
			if t.modern(now, m, &out); mcp.IsFirstPage(m.Params) {
				t.listTools = map[string]string{}
			}
			out = append(out, t.rec(now, phases.Discovery, phases.ToolsListReceived, ledger.F(phases.FieldRequestID, id)))
		case mcp.MethodCallTool:
			t.modern(now, m, &out)
			c := mcp.ParseCall(m.Params)
			p.tool = c.Name
			ev := phases.ToolCallReceived
			if c.Continuation {
				// MRTR: "the client retries the original request" with the input
				// asked for; the rounds are one call.
				ev = phases.ToolCallContinued
			}
			fields := make([]ledger.Field, 4, 7) // room for task, traceparent and body: one allocation
			fields[0], fields[1], fields[2], fields[3] = ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldTool, p.tool), ledger.F("args_bytes", len(c.Arguments)), ledger.F("args_sha256", mcp.Sha256(c.Arguments))
			if c.Task {
				fields = append(fields, ledger.F("task", true))
			}
			out = append(out, t.rec(now, phases.Execution, ev, append(append(fields, traceparentIn(c.Meta)...), t.body(l)...)...))
		case mcp.MethodTaskResult:
			t.modern(now, m, &out)
			p.task = mcp.String(mcp.Member(m.Params, "taskId"))
			out = append(out, t.rec(now, phases.Execution, phases.RequestReceived, append(append([]ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldMethod, m.Method),
				ledger.F(phases.FieldDirection, dir.String())}, traceparent(m.Params)...), t.body(l)...)...))
		default:
			t.modern(now, m, &out)
			out = append(out, t.rec(now, phases.Execution, phases.RequestReceived, append(append(append([]ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldMethod, m.Method),
				ledger.F(phases.FieldDirection, dir.String())}, target(m.Method, m.Params)...), traceparent(m.Params)...), t.body(l)...)...))
		}
	} else {
		out = append(out, t.rec(now, phases.Execution, phases.RequestReceived, append([]ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldMethod, m.Method), ledger.F(phases.FieldDirection, dir.String())}, t.body(l)...)...))
	}
	t.pending[dir][m.ID] = p
	switch m.Method {
	case mcp.MethodInitialize, mcp.MethodDiscover, mcp.MethodListTools:
		// The handshake's and discovery's lines stay: they say what the
		// answer's do not (the client, the page asked for).
	default:
		t.asked, t.askedDir, t.askedOK = m.ID, dir, true
	}
	t.out = out
	return out
}

// Recorded tells the tracker the seq numbers the last Observe's records
// got. A call's answer then names its request's record (Answered).
func (t *Tracker) Recorded(recs []ledger.Record) {
	if !t.askedOK || len(recs) == 0 {
		return
	}
	t.askedOK = false
	if p, ok := t.pending[t.askedDir][t.asked]; ok {
		p.seq = recs[len(recs)-1].Seq // the request's record comes last
		t.pending[t.askedDir][t.asked] = p
	}
}

// Answered is the seq of the request record (tools/call and the requests of
// request_received) that the last Observe's answer answers; 0 for none. Its
// event line says nothing the answer's does not need, so the recorder
// leaves it out when both are written at once (ledger.Unprint): one line
// per call answered within a poll, two for a call still running.
func (t *Tracker) Answered() uint64 { return t.answered }

// modern notes the first 2026-07-28 request of a run that had no handshake:
// that era has none, so the request itself completes it, and its answer
// says the server took the version (request_id names it).
func (t *Tracker) modern(now time.Time, m *mcp.Msg, out *[]ledger.Record) {
	if t.hs == hsDone {
		return
	}
	ver, _ := mcp.RequestMeta(m.Params)
	if ver == "" {
		return
	}
	t.hs = hsDone
	t.deadline = time.Time{}
	*out = append(*out, t.rec(now, phases.Handshake, phases.ModernRequest, ledger.F(phases.FieldRequestID, string(m.RawID)), ledger.F(phases.FieldMethod, m.Method),
		ledger.F(phases.FieldProtocolVersion, ver)))
}

// traceparent carries a request's W3C trace context (params._meta.traceparent)
// into the ledger, so an exported span joins the agent's own trace.
// maxTarget bounds a request's target field: a resource URI can be any length.
const maxTarget = 1024

// target is what a request acts on, for the fields of its record: the
// resource of resources/read, subscribe and unsubscribe, the prompt of
// prompts/get (redacted: a URI may carry a credential).
func target(method string, params []byte) []ledger.Field {
	key, field := "", ""
	switch method {
	case mcp.MethodReadResource, mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		key, field = "uri", phases.FieldURI
	case mcp.MethodGetPrompt:
		key, field = "name", phases.FieldPrompt
	default:
		return nil
	}
	v := mcp.String(mcp.Member(params, key))
	if v == "" || len(v) > maxTarget {
		return nil
	}
	return []ledger.Field{ledger.F(field, redact.String(v))}
}

func traceparent(params []byte) []ledger.Field {
	return traceparentIn(mcp.Member(params, "_meta"))
}

// traceparentIn is traceparent given params._meta.
func traceparentIn(meta []byte) []ledger.Field {
	tp := mcp.String(mcp.Member(meta, "traceparent"))
	if tp == "" || len(tp) > 64 {
		return nil
	}
	return []ledger.Field{ledger.F("traceparent", tp)}
}

func (t *Tracker) notification(now time.Time, dir phases.Dir, m *mcp.Msg) []ledger.Record {
	switch {
	case dir == phases.FromClient && m.Method == mcp.NotificationInitialized:
		switch t.hs {
		case hsResponded:
			t.hs = hsDone
			t.deadline = time.Time{}
		case hsInitReceived:
			t.earlyInit = true
		}
		return t.one(t.rec(now, phases.Handshake, phases.InitializedReceived))
	case dir == phases.FromServer && m.Method == mcp.NotificationToolListChanged:
		return t.one(t.rec(now, phases.Discovery, phases.ToolsListChanged))
	case m.Method == mcp.NotificationCancelled:
		// A side cancels a request it sent itself.
		reqID, _ := mcp.ParseID(mcp.Member(m.Params, "requestId"))
		p, ok := t.pending[dir][reqID]
		if !ok {
			return nil
		}
		delete(t.pending[dir], reqID)
		return t.one(t.rec(now, phases.Execution, phases.RequestCancelled, ledger.F(phases.FieldRequestID, p.id), ledger.F(phases.FieldMethod, p.method),
			ledger.F(phases.FieldReason, mcp.String(mcp.Member(m.Params, "reason"))), ledger.F(phases.FieldLatencyMS, now.Sub(p.at))))
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// parseError reads an error response's error; its own function so that the
// answers that succeed do not allocate it.
func parseError(raw []byte) rpcError {
	var e rpcError
	_ = json.Unmarshal(raw, &e)
	return e
}

func (t *Tracker) response(now time.Time, dir phases.Dir, m *mcp.Msg, l *Observation) []ledger.Record {
	reqDir := phases.FromClient
	if dir == phases.FromClient {
		reqDir = phases.FromServer
	}
	p, ok := t.pending[reqDir][m.ID]
	if !ok {
		return t.one(t.rec(now, phases.Transport, phases.UnknownResponse, ledger.F(phases.FieldRequestID, string(m.RawID)), ledger.F(phases.FieldDirection, dir.String())))
	}
	delete(t.pending[reqDir], m.ID)
	t.answered = p.seq
	id := p.id // the request's spelling: the answer may re-spell the same id
	latency := ledger.F(phases.FieldLatencyMS, now.Sub(p.at))
	var e rpcError
	failed := m.Kind == mcp.ErrorResponse
	if failed {
		e = parseError(m.Error)
	}
	body := t.body(l)
	if reqDir == phases.FromServer {
		return t.one(t.rec(now, phases.Execution, phases.RequestResponded, append([]ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldMethod, p.method),
			ledger.F(phases.FieldDirection, reqDir.String()), ledger.F(phases.FieldOutcome, mcp.Outcome(m)), ledger.F(phases.FieldCode, e.Code), latency}, append(errMessage(failed, e), body...)...)...))
	}
	switch p.method {
	case mcp.MethodInitialize:
		if failed {
			return t.one(t.rec(now, phases.Handshake, phases.InitializeFailed, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldCode, e.Code), ledger.F(phases.FieldMessage, redact.String(e.Message)), latency))
		}
		r, _ := mcp.ParseInitializeResult(m.Result)
		server := r.Server()
		t.hs = hsResponded
		if t.earlyInit {
			t.hs = hsDone
			t.deadline = time.Time{}
		}
		return t.one(t.rec(now, phases.Handshake, phases.InitializeResponded, append([]ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldProtocolVersion, r.ProtocolVersion),
			ledger.F(phases.FieldServerName, redact.String(server.Name)), ledger.F(phases.FieldServerVersion, redact.String(server.Version)), ledger.F("capabilities", r.CapabilityNames()), latency}, body...)...))
	case mcp.MethodDiscover:
		if failed {
			return t.one(t.rec(now, phases.Handshake, phases.DiscoverFailed, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldCode, e.Code), ledger.F(phases.FieldMessage, redact.String(e.Message)), latency))
		}
		r, _ := mcp.ParseDiscoverResult(m.Result)
		server := r.Server()
		t.hs = hsDone
		t.deadline = time.Time{}
		return t.one(t.rec(now, phases.Handshake, phases.DiscoverResponded, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldSupportedVersions, r.SupportedVersions),
			ledger.F(phases.FieldServerName, redact.String(server.Name)), ledger.F(phases.FieldServerVersion, redact.String(server.Version)), ledger.F("capabilities", r.CapabilityNames()), latency))
	case mcp.MethodListTools:
		if failed {
			return t.one(t.rec(now, phases.Discovery, phases.ToolsListFailed, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldCode, e.Code), ledger.F(phases.FieldMessage, redact.String(e.Message)), latency))
		}
		return t.one(t.toolsListed(now, id, m.Result, l, latency))
	case mcp.MethodCallTool:
		// The outcome comes from the scanner, which read the whole line however long.
		oc := mcp.Outcome(m)
		fields := make([]ledger.Field, 5, 8) // room for code, message or task id, and body: one allocation
		fields[0], fields[1], fields[2], fields[3], fields[4] = ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldTool, p.tool), ledger.F(phases.FieldOutcome, oc), latency, ledger.F("result_bytes", l.Size)
		if failed {
			fields = append(fields, ledger.F(phases.FieldCode, e.Code), ledger.F(phases.FieldMessage, redact.String(e.Message)))
		}
		ev := phases.ToolCallResponded
		switch oc {
		case mcp.OutcomeInputRequired:
			ev = phases.ToolCallInputRequired
		case mcp.OutcomeTaskCreated:
			// "the work goes on": the call ends with the task's tasks/result.
			ev = phases.ToolCallTaskCreated
			if task := mcp.String(mcp.Member(mcp.Member(m.Result, "task"), "taskId")); task != "" {
				if t.tasks == nil {
					t.tasks = map[string]taskCall{}
				}
				t.tasks[task] = taskCall{id: id, tool: p.tool, at: p.at}
				fields = append(fields, ledger.F(phases.FieldTaskID, task))
			}
		}
		return t.one(t.rec(now, phases.Execution, ev, append(fields, body...)...))
	case mcp.MethodTaskResult:
		if c, ok := t.tasks[p.task]; ok {
			// The task's outcome is the call's: the record links back to it.
			delete(t.tasks, p.task)
			fields := []ledger.Field{ledger.F(phases.FieldRequestID, c.id), ledger.F(phases.FieldTool, c.tool), ledger.F(phases.FieldOutcome, mcp.Outcome(m)), ledger.F(phases.FieldLatencyMS, now.Sub(c.at)),
				ledger.F("result_bytes", l.Size), ledger.F(phases.FieldTaskID, p.task), ledger.F(phases.FieldViaRequestID, id)}
			if failed {
				fields = append(fields, ledger.F(phases.FieldCode, e.Code), ledger.F(phases.FieldMessage, redact.String(e.Message)))
			}
			return t.one(t.rec(now, phases.Execution, phases.ToolCallResponded, append(fields, body...)...))
		}
	}
	fields := []ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldMethod, p.method), ledger.F(phases.FieldDirection, reqDir.String()), ledger.F(phases.FieldOutcome, mcp.Outcome(m)), latency}
	if failed {
		fields = append(fields, ledger.F(phases.FieldCode, e.Code))
	}
	return t.one(t.rec(now, phases.Execution, phases.RequestResponded, append(append(fields, errMessage(failed, e)...), body...)...))
}

// errMessage is a failed answer's message, redacted: the span's status says it.
func errMessage(failed bool, e rpcError) []ledger.Field {
	if !failed {
		return nil
	}
	return []ledger.Field{ledger.F(phases.FieldMessage, redact.String(e.Message))}
}

func (t *Tracker) toolsListed(now time.Time, id string, result []byte, l *Observation, latency ledger.Field) ledger.Record {
	r, err := mcp.ParseToolsPage(result)
	if l.Truncated || err != nil {
		return t.rec(now, phases.Discovery, phases.ToolsListResponded, ledger.F(phases.FieldRequestID, id), ledger.F(phases.FieldComplete, false), ledger.F(phases.FieldUnparsed, true), latency)
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
	fields := []ledger.Field{ledger.F(phases.FieldRequestID, id), ledger.F("page_tools", len(r.Tools))}
	if invalid > 0 {
		fields = append(fields, ledger.F("invalid_tools", invalid))
	}
	if r.More {
		return t.rec(now, phases.Discovery, phases.ToolsListResponded, append(fields, ledger.F(phases.FieldComplete, false), latency)...)
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
	fields = append(fields, ledger.F(phases.FieldComplete, true), ledger.F(phases.FieldToolCount, len(names)), ledger.F("tools", names),
		ledger.F("tool_digests", digests), ledger.F("surface_sha256", mcp.SurfaceDigest(t.listTools)), latency)
	if len(names) == 0 {
		fields = append(fields, ledger.F("warning", "zero tools: the server is connected but offers nothing to call"))
	}
	t.listTools = nil
	return t.rec(now, phases.Discovery, phases.ToolsListResponded, fields...)
}
