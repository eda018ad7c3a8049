// Package otelexport ships phase ledgers to an OpenTelemetry collector over
// OTLP: a Mapper turns records into spans, Live streams a session's records
// off the relay path, and ExportFiles ships ledger files resumably.
//
// The shape: one trace per run (its id derived from the run id), a root span
// "run SERVER" from spawn_requested to exited, a span per phase (launch,
// handshake, discovery) and per request ("tools/call get_rate"), restarts as
// links to the previous run's root, and the other records (stdout_noise,
// kill_requested, external_attempt, …) as span events. Attributes follow the
// OpenTelemetry MCP conventions; every ledger field rides along as
// mcpshim.FIELD. Nothing is exported that the ledger does not hold; it reads
// records and never writes a ledger.
package otelexport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

const (
	// ScopeName is the instrumentation scope of every span.
	ScopeName = "github.com/mcpshim-dev/mcpshim/otelexport"
	// FieldPrefix names the attributes that carry ledger fields.
	FieldPrefix = "mcpshim."
	// TraceparentField is the request record field holding the W3C
	// traceparent the client sent in params._meta.
	TraceparentField = "traceparent"

	maxEvents     = 128 // per span, as the SDK's default limit
	maxClosedRuns = 256 // runs remembered as ended, for their late records
)

// Mapper turns ledger records, in ledger order, into finished spans. Spans
// are built from record pairs (received/responded, spawn_requested/spawned),
// so it keeps the open ones per run; that state is small and serialisable,
// which makes a batch export resumable. Span ids are derived from the run id
// and the records, so the same records always give the same spans.
//
// A run's root span is emitted when the run ends (exited, spawn_failed,
// and a remote run's disconnected, connect_failed), with the run's verdict
// (verdict.Judge) as its outcome and status; its children are emitted as
// they end and point at it by id.
// It is not safe for concurrent use.
type Mapper struct {
	st        mapperState
	resources map[[2]string]*Resource
	// rootAttrs, when set, adds attributes to every root span (the live
	// exporter's drop count).
	rootAttrs func() []attribute.KeyValue
	// Orphans counts records that belong to no run.
	Orphans int
}

type mapperState struct {
	Runs   map[string]*runState `json:"runs,omitempty"`
	Closed []string             `json:"closed,omitempty"` // runs whose root was emitted, oldest first
}

// runState is one open run.
type runState struct {
	Run       string                `json:"run"`
	Shim      string                `json:"shim"`
	Server    string                `json:"server"`
	PID       int                   `json:"pid,omitempty"`
	Start     time.Time             `json:"start"`
	Last      time.Time             `json:"last"`
	SpawnedAt time.Time             `json:"spawned_at,omitzero"`
	PrevRun   string                `json:"previous_run,omitempty"`
	Protocol  string                `json:"protocol,omitempty"`
	Root      spanState             `json:"root"`
	Launch    *spanState            `json:"launch,omitempty"`
	Handshake *spanState            `json:"handshake,omitempty"`
	Discovery *spanState            `json:"discovery,omitempty"`
	Requests  map[string]*spanState `json:"requests,omitempty"` // by direction/id
	// Ended rounds of calls that go on: an input_required round by tool
	// (the continuation carries no id of the round it answers), a created
	// task by task id.
	Rounds map[string]*linkState `json:"rounds,omitempty"`
	Tasks  map[string]*linkState `json:"tasks,omitempty"`

	// Where the handshake span stands.
	HandshakeDone bool `json:"handshake_done,omitempty"`
	Responded     bool `json:"responded,omitempty"`   // initialize answered
	Initialized   bool `json:"initialized,omitempty"` // notifications/initialized seen

	// Fold is the run's records as the verdict reads them: the root's
	// outcome and status are its verdict, as every view's.
	Fold verdict.Fold `json:"fold"`
}

// spanState is a span that has started and not ended.
type spanState struct {
	ID          string         `json:"id"` // hex span id
	Parent      string         `json:"parent,omitempty"`
	Start       time.Time      `json:"start"`
	Method      string         `json:"method,omitempty"`
	Tool        string         `json:"tool,omitempty"`
	Dir         string         `json:"dir,omitempty"`
	Traceparent string         `json:"traceparent,omitempty"`
	Follows     *linkState     `json:"follows,omitempty"` // the round this request goes on from
	Fields      map[string]any `json:"fields,omitempty"`  // the opening record's
	Events      []eventState   `json:"events,omitempty"`
	Dropped     int            `json:"dropped_events,omitempty"`
}

// linkState is an ended span another links to, as mcpshim.link=Kind.
type linkState struct {
	Trace string `json:"trace"` // hex
	Span  string `json:"span"`  // hex
	Kind  string `json:"kind"`
}

// follow is a link to span, of kind.
func follow(span *Span, kind string) *linkState {
	return &linkState{Trace: span.SpanContext.TraceID().String(), Span: span.SpanContext.SpanID().String(), Kind: kind}
}

type eventState struct {
	Name   string         `json:"name"`
	Time   time.Time      `json:"time"`
	Fields map[string]any `json:"fields,omitempty"`
}

// NewMapper returns a Mapper with no open runs.
func NewMapper() *Mapper {
	return &Mapper{st: mapperState{Runs: map[string]*runState{}}, resources: map[[2]string]*Resource{}}
}

// MarshalJSON is the open state: the open runs and the recently ended ones.
func (m *Mapper) MarshalJSON() ([]byte, error) { return json.Marshal(m.st) }

// UnmarshalJSON restores a state written by MarshalJSON.
func (m *Mapper) UnmarshalJSON(b []byte) error {
	var st mapperState
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // field values round-trip as the ledger reader gives them
	if err := d.Decode(&st); err != nil {
		return fmt.Errorf("mapper state: %w", err)
	}
	if st.Runs == nil {
		st.Runs = map[string]*runState{}
	}
	m.st = st
	if m.resources == nil {
		m.resources = map[[2]string]*Resource{}
	}
	return nil
}

// OpenRuns is how many runs have started and not ended.
func (m *Mapper) OpenRuns() int { return len(m.st.Runs) }

// Add maps one record and returns the spans it ended.
func (m *Mapper) Add(e *ledger.Entry) []*Span {
	if e.Run == "" {
		m.Orphans++
		return nil
	}
	if _, open := m.st.Runs[e.Run]; !open && m.closed(e.Run) {
		return []*Span{m.late(e)}
	}
	r := m.run(e)
	if e.Time.After(r.Last) {
		r.Last = e.Time
	}
	r.Fold.Add(e)
	var out []*Span
	emit := func(s *Span) {
		if s != nil {
			out = append(out, s)
		}
	}
	switch e.Event {
	case phases.SpawnRequested:
		r.PrevRun = e.Str("previous_run")
		r.Launch = r.open("launch", e)
	case phases.Spawned:
		r.SpawnedAt = e.Time
		r.PID = e.PID // the record's own pid; the field of the same name folds into it
		if r.Launch == nil {
			r.Launch = r.open("launch", e)
		}
		emit(m.end(r, r.Launch, "launch", e, status{}))
		r.Launch = nil
	case phases.SpawnFailed:
		if r.Launch == nil {
			r.Launch = r.open("launch", e)
		}
		emit(m.end(r, r.Launch, "launch", e, fail(e.Str("error_class"), e.Str("error"))))
		r.Launch = nil
		out = append(out, m.closeRun(r, e)...)
	case phases.Exited, phases.Disconnected, phases.ConnectFailed:
		out = append(out, m.closeRun(r, e)...)

	case phases.InitializeReceived, phases.DiscoverReceived:
		if r.Handshake == nil && !r.HandshakeDone {
			r.Handshake = r.open("handshake", e)
		}
		r.openRequest(e, "client", methodOf(e), r.Handshake)
	case phases.InitializeResponded:
		r.Protocol = e.Str("protocol_version")
		emit(m.endRequest(r, e, "client", status{}))
		r.Responded = true
		if r.Initialized {
			emit(m.endHandshake(r, e, status{}))
		}
	case phases.InitializedReceived:
		r.Initialized = true
		if r.Responded && r.Handshake != nil {
			emit(m.endHandshake(r, e, status{}))
		} else {
			m.event(r, e)
		}
	case phases.DiscoverResponded:
		emit(m.endRequest(r, e, "client", status{}))
		emit(m.endHandshake(r, e, status{}))
	case phases.InitializeFailed, phases.DiscoverFailed:
		st := rpcFail(e)
		emit(m.endRequest(r, e, "client", st))
		emit(m.endHandshake(r, e, st))
	case phases.ModernRequest:
		r.Protocol = e.Str("protocol_version")
		if r.Handshake == nil {
			r.Handshake = r.open("handshake", e)
		}
		emit(m.endHandshake(r, e, status{}))
	case phases.HandshakeReplayed:
		r.Protocol = e.Str("protocol_version")
		r.Handshake = r.open("handshake", e)
		r.Handshake.Start = backdate(e)
		emit(m.endHandshake(r, e, status{}))
	case phases.HandshakeTimeout:
		if r.Handshake == nil {
			r.Handshake = r.open("handshake", e)
			r.Handshake.Start = r.SpawnedAt
			if r.SpawnedAt.IsZero() {
				r.Handshake.Start = r.Start
			}
		}
		emit(m.endHandshake(r, e, fail(phases.HandshakeTimeout, "no handshake in time: "+e.Str("last_event"))))

	case phases.ToolsListReceived:
		if r.Discovery == nil {
			r.Discovery = r.open("discovery", e)
		}
		r.openRequest(e, "client", mcp.MethodListTools, r.Discovery)
	case phases.ToolsListResponded:
		emit(m.endRequest(r, e, "client", status{}))
		if r.Discovery != nil && (e.Bool("complete") || e.Bool("unparsed")) {
			emit(m.end(r, r.Discovery, "discovery", e, status{}))
			r.Discovery = nil
		}
	case phases.ToolsListFailed:
		st := rpcFail(e)
		emit(m.endRequest(r, e, "client", st))
		if r.Discovery != nil {
			emit(m.end(r, r.Discovery, "discovery", e, st))
			r.Discovery = nil
		}

	case phases.ToolCallReceived:
		r.openRequest(e, "client", mcp.MethodCallTool, nil)
	case phases.ToolCallContinued:
		// MRTR: "the client retries the original request" under a new id; the
		// retry is a request span of its own, linked to the round it answers.
		r.openRequest(e, "client", mcp.MethodCallTool, nil)
		if prev := r.Rounds[e.Str("tool")]; prev != nil {
			r.Requests["client/"+e.Str("request_id")].Follows = prev
			delete(r.Rounds, e.Str("tool"))
		}
	case phases.ToolCallInputRequired:
		// The request is answered; the call goes on in the client's next round.
		span := m.endRequest(r, e, "client", status{})
		r.Rounds = remember(r.Rounds, e.Str("tool"), follow(span, "previous_round"))
		emit(span)
	case phases.ToolCallTaskCreated:
		// The request is answered with a task; the call's outcome comes with
		// its tasks/result, whose span links back here.
		span := m.endRequest(r, e, "client", status{})
		if task := e.Str("task_id"); task != "" {
			r.Tasks = remember(r.Tasks, task, follow(span, "task_created"))
		}
		emit(span)
	case phases.RequestReceived:
		r.openRequest(e, dirOf(e), e.Str("method"), nil)
	case phases.ToolCallResponded, phases.RequestResponded:
		if via := e.Str("via_request_id"); via != "" && e.Event == phases.ToolCallResponded {
			emit(m.endTaskResult(r, e, via))
			break
		}
		emit(m.endRequest(r, e, dirOf(e), outcomeStatus(e)))
	case phases.RequestCancelled:
		dir := "client"
		if _, open := r.Requests["client/"+e.Str("request_id")]; !open {
			if _, open := r.Requests["server/"+e.Str("request_id")]; open {
				dir = "server"
			}
		}
		emit(m.endRequest(r, e, dir, fail(phases.RequestCancelled, e.Str("reason"))))
	case phases.PendingFailed:
		emit(m.endRequest(r, e, dirOf(e), fail(phases.PendingFailed, e.Str("message"))))

	default:
		m.event(r, e)
	}
	return out
}

// Finish ends every open run at its last record, marked unfinished: the
// session is over and no exit will be recorded.
func (m *Mapper) Finish() []*Span {
	runs := make([]string, 0, len(m.st.Runs))
	for id := range m.st.Runs {
		runs = append(runs, id)
	}
	sort.Strings(runs)
	var out []*Span
	for _, id := range runs {
		r := m.st.Runs[id]
		e := &ledger.Entry{Time: r.Last, Run: r.Run, Shim: r.Shim, Server: r.Server, Event: "unfinished"}
		out = append(out, m.closeRun(r, e)...)
	}
	return out
}

// run returns the open run of e, opening it on its first record.
func (m *Mapper) run(e *ledger.Entry) *runState {
	if r, ok := m.st.Runs[e.Run]; ok {
		if r.Server == "" {
			r.Server = e.Server
		}
		return r
	}
	r := &runState{Run: e.Run, Shim: e.Shim, Server: e.Server, Start: e.Time, Last: e.Time, PID: e.PID,
		Root: spanState{ID: RootSpanID(e.Run).String(), Start: e.Time}, Requests: map[string]*spanState{}}
	m.st.Runs[e.Run] = r
	return r
}

func (m *Mapper) closed(run string) bool {
	for _, c := range m.st.Closed {
		if c == run {
			return true
		}
	}
	return false
}

// open starts a phase span at e, keyed by e's seq so a second handshake or
// discovery in the same run gets its own span.
func (r *runState) open(phase string, e *ledger.Entry) *spanState {
	return &spanState{ID: spanID(r.Run, phase+"/"+strconv.FormatUint(e.Seq, 10)).String(), Parent: r.Root.ID,
		Start: e.Time, Fields: e.Fields}
}

func (r *runState) openRequest(e *ledger.Entry, dir, method string, phase *spanState) {
	s := &spanState{Start: e.Time, Method: method, Tool: e.Str("tool"), Dir: dir, Parent: r.Root.ID,
		Traceparent: e.Str(TraceparentField), Fields: e.Fields}
	if phase != nil {
		s.Parent = phase.ID
	}
	if r.Requests == nil {
		r.Requests = map[string]*spanState{}
	}
	r.Requests[dir+"/"+e.Str("request_id")] = s
}

// event attaches e to the innermost open span: the request it names, or the
// one request in flight (as the tracker attributes external attempts), the
// open handshake or discovery, or else the run's root.
func (m *Mapper) event(r *runState, e *ledger.Entry) {
	target := &r.Root
	switch {
	case r.Requests["client/"+e.Str("request_id")] != nil:
		target = r.Requests["client/"+e.Str("request_id")]
	case len(r.Requests) == 1:
		for _, s := range r.Requests {
			target = s
		}
	case r.Handshake != nil:
		target = r.Handshake
	case r.Discovery != nil:
		target = r.Discovery
	}
	if len(target.Events) >= maxEvents {
		target.Dropped++
		return
	}
	fields := e.Fields
	if e.Origin != "" {
		fields = merge(fields, map[string]any{"origin": e.Origin})
	}
	target.Events = append(target.Events, eventState{Name: e.Event, Time: e.Time, Fields: fields})
}

// status is how a span ended.
type status struct {
	errType string
	code    string // the JSON-RPC error code, when there was one
	desc    string
}

func fail(errType, desc string) status { return status{errType: errType, desc: desc} }

// rpcFail is a JSON-RPC error answer: error.type is its code (MCP conventions).
func rpcFail(e *ledger.Entry) status {
	c, _ := e.Int("code")
	code := strconv.FormatInt(c, 10)
	return status{errType: code, code: code, desc: e.Str("message")}
}

// outcomeStatus maps the three outcomes of a call: a JSON-RPC error, a
// result with isError ("tool_error" in the MCP conventions), or success.
func outcomeStatus(e *ledger.Entry) status {
	switch e.Str("outcome") {
	case "rpc_error":
		return rpcFail(e)
	case "is_error":
		return status{errType: "tool_error"}
	}
	return status{}
}

func (m *Mapper) end(r *runState, s *spanState, name string, e *ledger.Entry, st status) *Span {
	span := m.stub(r, name, s, e.Time)
	addAttrs(span, fieldAttrs(merge(s.Fields, e.Fields), nil)...)
	if name == "launch" && r.PID > 0 {
		addAttrs(span, semconv.ProcessPIDKey.Int(r.PID))
	}
	if name == "handshake" && r.Protocol != "" {
		addAttrs(span, semconv.McpProtocolVersionKey.String(r.Protocol))
	}
	setStatus(span, st)
	return span
}

func (m *Mapper) endHandshake(r *runState, e *ledger.Entry, st status) *Span {
	if st.errType == "" {
		r.HandshakeDone = true
	}
	if r.Handshake == nil {
		return nil
	}
	s := m.end(r, r.Handshake, "handshake", e, st)
	r.Handshake = nil
	return s
}

// endRequest ends the request span of e. A request whose received record is
// missing (dropped by a full queue, or exported before a state reset) starts
// latency_ms before its answer.
func (m *Mapper) endRequest(r *runState, e *ledger.Entry, dir string, st status) *Span {
	key := dir + "/" + e.Str("request_id")
	s := r.Requests[key]
	if s == nil {
		s = &spanState{Start: backdate(e), Method: methodOf(e), Tool: e.Str("tool"), Dir: dir, Parent: r.Root.ID}
		switch {
		case r.Handshake != nil && (s.Method == mcp.MethodInitialize || s.Method == mcp.MethodDiscover):
			s.Parent = r.Handshake.ID
		case r.Discovery != nil && s.Method == mcp.MethodListTools:
			s.Parent = r.Discovery.ID
		}
	}
	delete(r.Requests, key)
	s.ID = spanID(r.Run, "req/"+strconv.FormatUint(e.Seq, 10)+"/"+key).String()
	return m.request(r, s, e, e.Str("request_id"), st)
}

// endTaskResult ends the tasks/result request (id via) that brought a task's
// outcome: the call's tool_call_responded, under the call's own request id.
// Its span carries the call's outcome and links to the call's answered
// request, where the task was created.
func (m *Mapper) endTaskResult(r *runState, e *ledger.Entry, via string) *Span {
	key := "client/" + via
	s := r.Requests[key]
	if s == nil {
		// The tasks/result record is missing: the span starts at the call.
		s = &spanState{Start: backdate(e), Method: mcp.MethodTaskResult, Dir: "client", Parent: r.Root.ID}
	}
	delete(r.Requests, key)
	s.ID = spanID(r.Run, "req/"+strconv.FormatUint(e.Seq, 10)+"/"+key).String()
	s.Tool = e.Str("tool")
	if task := e.Str("task_id"); r.Tasks[task] != nil {
		s.Follows = r.Tasks[task]
		delete(r.Tasks, task)
	}
	return m.request(r, s, e, via, outcomeStatus(e))
}

// remember adds an ended round to m, made on first use.
func remember(m map[string]*linkState, key string, l *linkState) map[string]*linkState {
	if m == nil {
		m = map[string]*linkState{}
	}
	m[key] = l
	return m
}

func (m *Mapper) request(r *runState, s *spanState, e *ledger.Entry, id string, st status) *Span {
	name := s.Method
	if s.Tool != "" {
		name += " " + s.Tool
	}
	span := m.stub(r, name, s, e.Time)
	span.SpanKind = trace.SpanKindServer
	if s.Dir == "server" {
		span.SpanKind = trace.SpanKindClient // the server asked the client
	}
	if tp := parseTraceparent(s.Traceparent); tp.IsValid() {
		// The request joins the agent's trace; the link keeps it tied to the run.
		span.Parent = tp
		span.SpanContext = span.SpanContext.WithTraceID(tp.TraceID())
		span.Links = append(span.Links, Link{SpanContext: rootContext(r.Run),
			Attributes: []attribute.KeyValue{attribute.String(FieldPrefix+"link", "run")}})
	}
	addAttrs(span,
		semconv.McpMethodNameKey.String(s.Method),
		semconv.JSONRPCRequestIDKey.String(id),
		semconv.NetworkTransportPipe)
	if r.Protocol != "" {
		addAttrs(span, semconv.McpProtocolVersionKey.String(r.Protocol))
	}
	switch {
	case s.Method == mcp.MethodCallTool:
		addAttrs(span, semconv.GenAIToolNameKey.String(s.Tool), semconv.GenAIOperationNameExecuteTool)
	case s.Tool != "":
		addAttrs(span, semconv.GenAIToolNameKey.String(s.Tool)) // a task's tasks/result
	}
	if l := s.Follows; l != nil {
		tid, _ := trace.TraceIDFromHex(l.Trace)
		sid, _ := trace.SpanIDFromHex(l.Span)
		span.Links = append(span.Links, Link{
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			Attributes:  []attribute.KeyValue{attribute.String(FieldPrefix+"link", l.Kind)}})
	}
	if st.code != "" {
		addAttrs(span, semconv.RPCResponseStatusCodeKey.String(st.code))
	}
	addAttrs(span, fieldAttrs(merge(s.Fields, e.Fields), requestKeys)...)
	setStatus(span, st)
	return span
}

// requestKeys are fields already carried by convention attributes.
var requestKeys = map[string]bool{"request_id": true, "method": true, "tool": true, TraceparentField: true}

// closeRun ends what is still open in r and then r itself.
func (m *Mapper) closeRun(r *runState, e *ledger.Entry) []*Span {
	var out []*Span
	ended := fail("exited", "the run ended first")
	if e.Event == "unfinished" {
		ended = fail("unfinished", "the ledger ended first")
	}
	keys := make([]string, 0, len(r.Requests))
	for k := range r.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := r.Requests[k]
		s.ID = spanID(r.Run, "req/"+strconv.FormatUint(e.Seq, 10)+"/"+k).String()
		id := k[len(s.Dir)+1:]
		out = append(out, m.request(r, s, &ledger.Entry{Time: e.Time, Seq: e.Seq, Fields: map[string]any{"request_id": id}}, id, ended))
	}
	r.Requests = nil
	for _, p := range []struct {
		s    **spanState
		name string
	}{{&r.Launch, "launch"}, {&r.Handshake, "handshake"}, {&r.Discovery, "discovery"}} {
		if *p.s != nil {
			out = append(out, m.end(r, *p.s, p.name, &ledger.Entry{Time: e.Time}, ended))
			*p.s = nil
		}
	}
	out = append(out, m.root(r, e))
	delete(m.st.Runs, r.Run)
	m.st.Closed = append(m.st.Closed, r.Run)
	if len(m.st.Closed) > maxClosedRuns {
		m.st.Closed = m.st.Closed[len(m.st.Closed)-maxClosedRuns:]
	}
	return out
}

func (m *Mapper) root(r *runState, e *ledger.Entry) *Span {
	name := "run"
	if r.Server != "" {
		name += " " + r.Server
	}
	span := m.stub(r, name, &r.Root, e.Time)
	if r.PrevRun != "" {
		span.Links = append(span.Links, Link{SpanContext: rootContext(r.PrevRun),
			Attributes: []attribute.KeyValue{attribute.String(FieldPrefix+"link", "previous_run")}})
	}
	addAttrs(span, semconv.NetworkTransportPipe, attribute.String(FieldPrefix+"run", r.Run))
	if r.PID > 0 {
		addAttrs(span, semconv.ProcessPIDKey.Int(r.PID))
	}
	if r.Protocol != "" {
		addAttrs(span, semconv.McpProtocolVersionKey.String(r.Protocol))
	}
	if r.PrevRun != "" {
		addAttrs(span, attribute.String(FieldPrefix+"previous_run", r.PrevRun))
	}
	if e.Event == phases.Exited || e.Event == phases.Disconnected {
		addAttrs(span, fieldAttrs(e.Fields, nil)...)
	}
	v := verdict.Judge(&r.Fold, e.Time, false)
	addAttrs(span, attribute.String(FieldPrefix+"outcome", v.Outcome), attribute.Bool(FieldPrefix+"verdict.failed", v.Failed))
	if v.Cause != "" {
		addAttrs(span, attribute.String(FieldPrefix+"verdict.cause", v.Cause))
	}
	if v.Reason != "" {
		addAttrs(span, attribute.String(FieldPrefix+"verdict.reason", v.Reason))
	}
	if e.Event == "unfinished" {
		addAttrs(span, attribute.Bool(FieldPrefix+"unfinished", true))
	}
	if m.rootAttrs != nil {
		addAttrs(span, m.rootAttrs()...)
	}
	if v.Failed {
		errType := strings.ToLower(v.Outcome)
		if r.Fold.SpawnFailed {
			errType = r.Fold.ErrorClass
		}
		setStatus(span, fail(errType, v.Reason))
	}
	return span
}

// late maps a record of a run that already ended (restart_scheduled comes
// after exited) to a span of its own under the run's root.
func (m *Mapper) late(e *ledger.Entry) *Span {
	r := &runState{Run: e.Run, Shim: e.Shim, Server: e.Server, Root: spanState{ID: RootSpanID(e.Run).String()}}
	s := &spanState{ID: spanID(e.Run, "rec/"+strconv.FormatUint(e.Seq, 10)).String(), Parent: r.Root.ID, Start: e.Time}
	end := e.Time
	if ms, ok := e.Float("delay_ms"); ok && e.Event == phases.RestartScheduled {
		end = end.Add(time.Duration(ms * float64(time.Millisecond)))
	}
	span := m.stub(r, e.Event, s, end)
	addAttrs(span, fieldAttrs(e.Fields, nil)...)
	if e.Event == phases.RestartsExhausted {
		setStatus(span, fail(phases.RestartsExhausted, e.Str("reason")))
	}
	return span
}

// stub is a span of run r from s's start to end, with s's events.
func (m *Mapper) stub(r *runState, name string, s *spanState, end time.Time) *Span {
	sid, _ := trace.SpanIDFromHex(s.ID)
	span := &Span{
		Name: name,
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: TraceID(r.Run), SpanID: sid, TraceFlags: trace.FlagsSampled}),
		SpanKind:      trace.SpanKindInternal,
		StartTime:     s.Start,
		EndTime:       end,
		Resource:      m.resource(r.Server, r.Shim),
		DroppedEvents: s.Dropped,
	}
	if end.Before(s.Start) {
		span.EndTime = s.Start
	}
	if pid, err := trace.SpanIDFromHex(s.Parent); err == nil {
		span.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceID(r.Run), SpanID: pid, TraceFlags: trace.FlagsSampled})
	}
	if r.Shim != "" {
		addAttrs(span, semconv.McpSessionIDKey.String(r.Shim))
	}
	for _, ev := range s.Events {
		span.Events = append(span.Events, Event{Name: ev.Name, Time: ev.Time, Attributes: fieldAttrs(ev.Fields, nil)})
	}
	return span
}

// resource is NewResource(server, shim), made once per pair.
func (m *Mapper) resource(server, shim string) *Resource {
	key := [2]string{server, shim}
	if res, ok := m.resources[key]; ok {
		return res
	}
	res := NewResource(server, shim)
	m.resources[key] = res
	return res
}

// NewResource describes what emits a run's telemetry: service.name=mcpshim,
// mcpshim.server=the server's label, service.instance.id=the shim invocation.
func NewResource(server, shim string) *Resource {
	attrs := []attribute.KeyValue{semconv.ServiceNameKey.String("mcpshim"), attribute.String(FieldPrefix+"server", server)}
	if shim != "" {
		attrs = append(attrs, semconv.ServiceInstanceIDKey.String(shim))
	}
	return &Resource{Attributes: attrs}
}

func addAttrs(s *Span, kv ...attribute.KeyValue) {
	s.Attributes = append(s.Attributes, kv...)
}

func setStatus(s *Span, st status) {
	if st.errType == "" {
		return
	}
	s.Status = Status{Code: codes.Error, Description: st.desc}
	addAttrs(s, semconv.ErrorTypeKey.String(st.errType))
}

// backdate is when the operation e answers began: latency_ms before it.
func backdate(e *ledger.Entry) time.Time {
	ms, ok := e.Float("latency_ms")
	if !ok {
		return e.Time
	}
	return e.Time.Add(-time.Duration(ms * float64(time.Millisecond)))
}

func methodOf(e *ledger.Entry) string {
	switch e.Event {
	case phases.InitializeReceived, phases.InitializeResponded, phases.InitializeFailed:
		return mcp.MethodInitialize
	case phases.DiscoverReceived, phases.DiscoverResponded, phases.DiscoverFailed:
		return mcp.MethodDiscover
	case phases.ToolsListReceived, phases.ToolsListResponded, phases.ToolsListFailed:
		return mcp.MethodListTools
	case phases.ToolCallReceived, phases.ToolCallResponded, phases.ToolCallContinued,
		phases.ToolCallInputRequired, phases.ToolCallTaskCreated:
		return mcp.MethodCallTool
	}
	return e.Str("method")
}

func dirOf(e *ledger.Entry) string {
	if e.Str("direction") == "server" {
		return "server"
	}
	return "client"
}

// merge is a's fields overridden by b's.
func merge(a, b map[string]any) map[string]any {
	if len(a) == 0 {
		return b
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// fieldAttrs turns ledger fields into mcpshim.FIELD attributes, in key order.
// Objects become JSON text; numbers stay integers when they are.
func fieldAttrs(fields map[string]any, skip map[string]bool) []attribute.KeyValue {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]attribute.KeyValue, 0, len(keys))
	for _, k := range keys {
		key := attribute.Key(FieldPrefix + k)
		switch v := fields[k].(type) {
		case string:
			out = append(out, key.String(v))
		case bool:
			out = append(out, key.Bool(v))
		case json.Number:
			if i, err := v.Int64(); err == nil {
				out = append(out, key.Int64(i))
			} else if f, err := v.Float64(); err == nil {
				out = append(out, key.Float64(f))
			}
		case []any:
			if strs, ok := stringList(v); ok {
				out = append(out, key.StringSlice(strs))
				continue
			}
			if b, err := json.Marshal(v); err == nil {
				out = append(out, key.String(string(b)))
			}
		case map[string]any:
			if b, err := json.Marshal(v); err == nil {
				out = append(out, key.String(string(b)))
			}
		}
	}
	return out
}

func stringList(l []any) ([]string, bool) {
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
