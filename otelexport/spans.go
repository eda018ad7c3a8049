package otelexport

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/verdict"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// event attaches e to the innermost open span: the request it names, or the
// one request in flight (as the tracker attributes external attempts), the
// open handshake or discovery, or else the run's root.
func (m *Mapper) event(r *runState, e *ledger.Entry) {
	target := &r.Root
	switch {
	case r.Requests["client/"+e.Str(phases.FieldRequestID)] != nil:
		target = r.Requests["client/"+e.Str(phases.FieldRequestID)]
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

// ownError is the shim's own answer to a request the server can no longer
// answer: a JSON-RPC error like the server's, with the shim's code.
func ownError(e *ledger.Entry) status {
	if e.Str(phases.FieldDirection) == "server" {
		// A server's request the shim withdrew (notifications/cancelled): no error answer.
		return fail(phases.PendingFailed, e.Str(phases.FieldMessage))
	}
	code := strconv.Itoa(mcp.CodeServerGone)
	return status{errType: code, code: code, desc: e.Str(phases.FieldMessage)}
}

// rpcFail is a JSON-RPC error answer: error.type is its code (MCP conventions).
func rpcFail(e *ledger.Entry) status {
	c, _ := e.Int(phases.FieldCode)
	code := strconv.FormatInt(c, 10)
	return status{errType: code, code: code, desc: e.Str(phases.FieldMessage)}
}

// outcomeStatus maps the three outcomes of a call: a JSON-RPC error, a
// result with isError ("tool_error" in the MCP conventions), or success.
func outcomeStatus(e *ledger.Entry) status {
	switch e.Str(phases.FieldOutcome) {
	case "rpc_error":
		return rpcFail(e)
	case "is_error":
		return status{errType: "tool_error"}
	}
	return status{}
}

func (m *Mapper) end(r *runState, s *spanState, name string, e *ledger.Entry, st status) *Span {
	span := m.stub(r, name, s, e.Time)
	fields := merge(s.Fields, e.Fields)
	var skip map[string]bool
	if name == "launch" && !m.full {
		// What a reader needs: the command and which variables the shim
		// hid; the whole environment, PATH and cwd only with --capture full.
		skip = launchBulk
		if hidden := credentialNames(fields[launchEnvNames]); len(hidden) > 0 {
			addAttrs(span, attribute.StringSlice(FieldPrefix+"env_redacted", hidden))
		}
	}
	addAttrs(span, fieldAttrs(fields, skip)...)
	if name == "launch" && r.PID > 0 {
		addAttrs(span, serverPID(r.PID))
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
	key := dir + "/" + e.Str(phases.FieldRequestID)
	s := r.Requests[key]
	if s == nil {
		s = &spanState{Start: backdate(e), Method: methodOf(e), Tool: e.Str(phases.FieldTool), Dir: dir, Parent: r.Root.ID}
		switch {
		case r.Handshake != nil && (s.Method == mcp.MethodInitialize || s.Method == mcp.MethodDiscover):
			s.Parent = r.Handshake.ID
		case r.Discovery != nil && s.Method == mcp.MethodListTools:
			s.Parent = r.Discovery.ID
		}
	}
	delete(r.Requests, key)
	s.ID = spanID(r.Run, "req/"+strconv.FormatUint(e.Seq, 10)+"/"+key).String()
	return m.request(r, s, e, e.Str(phases.FieldRequestID), st)
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
	s.Tool = e.Str(phases.FieldTool)
	if task := e.Str(phases.FieldTaskID); r.Tasks[task] != nil {
		s.Follows = r.Tasks[task]
		delete(r.Tasks, task)
	}
	return m.request(r, s, e, via, outcomeStatus(e))
}

// remember adds key to m, made on first use.
func remember[V any](m map[string]V, key string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[key] = v
	return m
}

func (m *Mapper) request(r *runState, s *spanState, e *ledger.Entry, id string, st status) *Span {
	fields := merge(s.Fields, e.Fields)
	prompt, _ := fields[phases.FieldPrompt].(string)
	// "{mcp.method.name} {target}" where target is the tool or the prompt;
	// never the resource URI, which is high-cardinality.
	name := s.Method
	switch {
	case s.Tool != "":
		name += " " + s.Tool
	case prompt != "":
		name += " " + prompt
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
	case prompt != "":
		addAttrs(span, semconv.GenAIPromptNameKey.String(prompt))
	}
	if uri, _ := fields[phases.FieldURI].(string); uri != "" {
		addAttrs(span, semconv.McpResourceURIKey.String(uri))
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
	skip := requestKeys
	if s.Tool != "" {
		// --capture full: the call's bodies as the conventions' opt-in
		// attributes rather than the lines they came in.
		skip = callKeys
		addAttrs(span, toolCallBodies(s.Method, s.Fields, e, st)...)
	}
	addAttrs(span, fieldAttrs(fields, skip)...)
	setStatus(span, st)
	return span
}

// callKeys are requestKeys and the bodies, which a call's span carries as
// gen_ai.tool.call.arguments and .result.
var callKeys = map[string]bool{phases.FieldRequestID: true, phases.FieldMethod: true, phases.FieldTool: true, TraceparentField: true,
	phases.FieldURI: true, phases.FieldPrompt: true, bodyField: true}

// bodyField holds a message's line, redacted, under --capture full.
const bodyField = "body"

// toolCallBodies are the opt-in gen_ai.tool.call.arguments (the request's
// params.arguments) and gen_ai.tool.call.result ("if execution was
// successful": the answer's result), as JSON text, from the redacted lines
// --capture full records. A line that does not parse gives nothing.
func toolCallBodies(method string, opened map[string]any, e *ledger.Entry, st status) []attribute.KeyValue {
	var out []attribute.KeyValue
	if req, _ := opened[bodyField].(string); req != "" && method == mcp.MethodCallTool {
		if args := mcp.Member(mcp.Member([]byte(req), "params"), "arguments"); len(args) > 0 && json.Valid(args) {
			out = append(out, semconv.GenAIToolCallArgumentsKey.String(string(args)))
		}
	}
	if resp := e.Str(bodyField); resp != "" && st.errType == "" && e.Str(phases.FieldOutcome) == mcp.OutcomeSuccess {
		if res := mcp.Member([]byte(resp), "result"); len(res) > 0 && json.Valid(res) {
			out = append(out, semconv.GenAIToolCallResultKey.String(string(res)))
		}
	}
	return out
}

// launchEnvNames is spawn_requested's field naming the server's variables.
const launchEnvNames = "env_names"

// launchBulk are spawn_requested's fields a launch span leaves to --capture full.
var launchBulk = map[string]bool{launchEnvNames: true, "path": true, "cwd": true}

// credentialNames are the names in v (a ledger list) whose values the shim
// hides (redact.CredentialName).
func credentialNames(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, n := range l {
		if s, ok := n.(string); ok && redact.CredentialName(s) {
			out = append(out, s)
		}
	}
	return out
}

// serverPID is the server's pid: an attribute of its spans, since the
// resource's process.pid is the shim's own.
func serverPID(pid int) attribute.KeyValue { return attribute.Int(FieldPrefix+"server_pid", pid) }

// requestKeys are fields already carried by convention attributes.
var requestKeys = map[string]bool{phases.FieldRequestID: true, phases.FieldMethod: true, phases.FieldTool: true, TraceparentField: true,
	phases.FieldURI: true, phases.FieldPrompt: true}

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
		out = append(out, m.request(r, s, &ledger.Entry{Time: e.Time, Seq: e.Seq, Fields: map[string]any{phases.FieldRequestID: id}}, id, ended))
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
	if e.Event == phases.Exited || e.Event == phases.SpawnFailed {
		// The supervisor says next what becomes of it (restart_scheduled,
		// restarts_exhausted): events of the root, which waits for them.
		r.End = &endState{Time: e.Time, Seq: e.Seq, Event: e.Event, Fields: e.Fields}
		m.st.Ending = append(m.st.Ending, r.Run)
		return out
	}
	return append(out, m.finishRun(r, e))
}

// finishRun emits r's root, ended by e, and forgets r.
func (m *Mapper) finishRun(r *runState, e *ledger.Entry) *Span {
	root := m.root(r, e)
	delete(m.st.Runs, r.Run)
	m.st.Closed = append(m.st.Closed, r.Run)
	if len(m.st.Closed) > maxClosedRuns {
		m.st.Closed = m.st.Closed[len(m.st.Closed)-maxClosedRuns:]
	}
	return root
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
		addAttrs(span, serverPID(r.PID))
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
	span := m.stub(r, e.Event, s, e.Time)
	addAttrs(span, fieldAttrs(e.Fields, nil)...)
	if e.Event == phases.RestartsExhausted {
		setStatus(span, fail(phases.RestartsExhausted, e.Str(phases.FieldReason)))
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
