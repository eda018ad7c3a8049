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

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
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
	// base is the resource every span's starts from (BaseResource); nil is
	// service.name=mcpshim alone.
	base []attribute.KeyValue
	// full exports what --capture full asks for: the launch's whole
	// environment, PATH and cwd.
	full bool
	// rootAttrs, when set, adds attributes to every root span (the live
	// exporter's drop count).
	rootAttrs func() []attribute.KeyValue
	// Orphans counts records that belong to no run.
	Orphans int
}

// NewMapper returns a Mapper with no open runs, whose spans' resources start
// from base (BaseResource; nil is service.name=mcpshim alone).
func NewMapper(base []attribute.KeyValue) *Mapper {
	return &Mapper{st: mapperState{Runs: map[string]*runState{}}, resources: map[[2]string]*Resource{}, base: base}
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
func (m *Mapper) OpenRuns() int { return len(m.st.Runs) - len(m.st.Ending) }

// Add maps one record and returns the spans it ended.
func (m *Mapper) Add(e *ledger.Entry) []*Span {
	if e.Run == "" {
		m.Orphans++
		return nil
	}
	if r := m.st.Runs[e.Run]; r != nil && r.End != nil {
		// What the supervisor records after an exit: the root's events.
		r.Fold.Add(e)
		m.event(r, e)
		return nil
	}
	out := m.flushEnding(e.Run)
	if _, open := m.st.Runs[e.Run]; !open && m.closed(e.Run) {
		return append(out, m.late(e))
	}
	r := m.run(e)
	if e.Time.After(r.Last) {
		r.Last = e.Time
	}
	r.Fold.Add(e)
	emit := func(s *Span) {
		if s != nil {
			out = append(out, s)
		}
	}
	switch e.Event {
	case phases.SpawnRequested:
		r.PrevRun = e.Str(phases.FieldPreviousRun)
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
		emit(m.end(r, r.Launch, "launch", e, fail(e.Str(phases.FieldErrorClass), e.Str(phases.FieldError))))
		r.Launch = nil
		out = append(out, m.closeRun(r, e)...)
	case phases.Exited, phases.Disconnected, phases.ConnectFailed:
		out = append(out, m.closeRun(r, e)...)

	case phases.InitializeReceived, phases.DiscoverReceived:
		if e.Event == phases.DiscoverReceived && r.Protocol == "" {
			// 2026-07-28: the version the client asks for in _meta, which
			// the server's answer accepts (or refuses: discover_failed).
			r.Protocol = e.Str(phases.FieldProtocolVersion)
		}
		if r.Handshake == nil && !r.HandshakeDone {
			r.Handshake = r.open("handshake", e)
		}
		r.openRequest(e, "client", methodOf(e), r.Handshake)
	case phases.InitializeResponded:
		r.Protocol = e.Str(phases.FieldProtocolVersion)
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
		// 2026-07-28 has no handshake: the first request carries the version,
		// and the server's answer to it is the handshake's end. A record
		// without the request's id (an older ledger) ends it at once.
		r.Protocol = e.Str(phases.FieldProtocolVersion)
		if r.Handshake == nil {
			r.Handshake = r.open("handshake", e)
		}
		if r.Modern = e.Str(phases.FieldRequestID); r.Modern == "" {
			emit(m.endHandshake(r, e, status{}))
		}
	case phases.HandshakeReplayed:
		r.Protocol = e.Str(phases.FieldProtocolVersion)
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
		emit(m.endHandshake(r, e, fail(phases.HandshakeTimeout, "no handshake in time: "+e.Str(phases.FieldLastEvent))))

	case phases.ToolsListReceived:
		if r.Discovery == nil {
			r.Discovery = r.open("discovery", e)
		}
		r.openRequest(e, "client", mcp.MethodListTools, r.Discovery)
	case phases.ToolsListResponded:
		emit(m.endRequest(r, e, "client", status{}))
		if r.Discovery != nil && (e.Bool(phases.FieldComplete) || e.Bool(phases.FieldUnparsed)) {
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
		if prev := r.Rounds[e.Str(phases.FieldTool)]; prev != nil {
			r.Requests["client/"+e.Str(phases.FieldRequestID)].Follows = prev
			delete(r.Rounds, e.Str(phases.FieldTool))
		}
	case phases.ToolCallInputRequired:
		// The request is answered; the call goes on in the client's next round.
		span := m.endRequest(r, e, "client", status{})
		r.Rounds = remember(r.Rounds, e.Str(phases.FieldTool), follow(span, "previous_round"))
		emit(span)
	case phases.ToolCallTaskCreated:
		// The request is answered with a task; the call's outcome comes with
		// its tasks/result, whose span links back here.
		span := m.endRequest(r, e, "client", status{})
		if task := e.Str(phases.FieldTaskID); task != "" {
			r.Tasks = remember(r.Tasks, task, follow(span, "task_created"))
		}
		emit(span)
	case phases.RequestReceived:
		r.openRequest(e, dirOf(e), e.Str(phases.FieldMethod), nil)
	case phases.ToolCallResponded, phases.RequestResponded:
		if via := e.Str(phases.FieldViaRequestID); via != "" && e.Event == phases.ToolCallResponded {
			emit(m.endTaskResult(r, e, via))
			break
		}
		emit(m.endRequest(r, e, dirOf(e), outcomeStatus(e)))
	case phases.RequestCancelled:
		dir := "client"
		if _, open := r.Requests["client/"+e.Str(phases.FieldRequestID)]; !open {
			if _, open := r.Requests["server/"+e.Str(phases.FieldRequestID)]; open {
				dir = "server"
			}
		}
		emit(m.endRequest(r, e, dir, fail(phases.RequestCancelled, e.Str(phases.FieldReason))))
	case phases.PendingFailed:
		emit(m.endRequest(r, e, dirOf(e), ownError(e)))

	default:
		m.event(r, e)
	}
	if r.Modern != "" && modernAnswers[e.Event] && dirOf(e) == "client" && e.Str(phases.FieldRequestID) == r.Modern {
		st := status{}
		if c, _ := e.Int(phases.FieldCode); c == mcp.CodeUnsupportedProtocolVersion {
			st = rpcFail(e) // the server refused the version: the handshake failed
		}
		r.Modern = ""
		emit(m.endHandshake(r, e, st))
	}
	return out
}

// modernAnswers are the records of a server's answer to a client's request:
// the one to the first 2026-07-28 request ends the handshake. A request the
// shim answers (pending_failed) or the client cancels leaves it open, as an
// initialize would, for the run's end to close.
var modernAnswers = map[string]bool{phases.ToolsListResponded: true, phases.ToolsListFailed: true, phases.ToolCallResponded: true,
	phases.ToolCallInputRequired: true, phases.ToolCallTaskCreated: true, phases.RequestResponded: true}

// Finish ends every open run at its last record, marked unfinished: the
// session is over and no exit will be recorded.
func (m *Mapper) Finish() []*Span { return m.FinishGone(nil) }

// flushEnding emits the held roots of the runs that exited, but run's: a
// record of another run means the supervisor has said what follows.
func (m *Mapper) flushEnding(run string) []*Span {
	if len(m.st.Ending) == 0 {
		return nil
	}
	var out []*Span
	kept := m.st.Ending[:0]
	for _, id := range m.st.Ending {
		r := m.st.Runs[id]
		switch {
		case r == nil:
		case id == run:
			kept = append(kept, id)
		default:
			out = append(out, m.finishRun(r, &ledger.Entry{Time: r.End.Time, Seq: r.End.Seq, Run: r.Run, Shim: r.Shim,
				Server: r.Server, Event: r.End.Event, Fields: r.End.Fields}))
		}
	}
	m.st.Ending = kept
	return out
}

// Flush emits the roots still held for the records that may follow an exit:
// the end of what there is to read.
func (m *Mapper) Flush() []*Span { return m.flushEnding("") }

// FinishGone ends, as Finish does, the open runs whose server is not alive
// (alive nil: every one): no shim is left to record their end.
func (m *Mapper) FinishGone(alive func(pid int) bool) []*Span {
	out := m.Flush()
	runs := make([]string, 0, len(m.st.Runs))
	for id, r := range m.st.Runs {
		if alive == nil || r.PID <= 0 || !alive(r.PID) {
			runs = append(runs, id)
		}
	}
	sort.Strings(runs)
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
