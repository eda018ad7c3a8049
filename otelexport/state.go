package otelexport

import (
	"strconv"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

type mapperState struct {
	Runs   map[string]*runState `json:"runs,omitempty"`
	Closed []string             `json:"closed,omitempty"` // runs whose root was emitted, oldest first
	// Ending are the runs that exited and whose root waits for the
	// supervisor's records that follow an exit (restart_scheduled,
	// restarts_exhausted), which become its events.
	Ending []string `json:"ending,omitempty"`
}

// endState is the record that ended a run whose root is held.
type endState struct {
	Time   time.Time      `json:"time"`
	Seq    uint64         `json:"seq"`
	Event  string         `json:"event"`
	Fields map[string]any `json:"fields,omitempty"`
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
	// Modern is the id of the 2026-07-28 request that opened the handshake
	// (modern_request): its answer ends it.
	Modern string `json:"modern,omitempty"`

	// End is the record that ended the run while its root is held (Ending).
	End *endState `json:"end,omitempty"`

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

// open starts a phase span at e, keyed by e's seq so a second handshake or
// discovery in the same run gets its own span.
func (r *runState) open(phase string, e *ledger.Entry) *spanState {
	return &spanState{ID: spanID(r.Run, phase+"/"+strconv.FormatUint(e.Seq, 10)).String(), Parent: r.Root.ID,
		Start: e.Time, Fields: e.Fields}
}

func (r *runState) openRequest(e *ledger.Entry, dir, method string, phase *spanState) {
	s := &spanState{Start: e.Time, Method: method, Tool: e.Str(phases.FieldTool), Dir: dir, Parent: r.Root.ID,
		Traceparent: e.Str(TraceparentField), Fields: e.Fields}
	if phase != nil {
		s.Parent = phase.ID
	}
	if r.Requests == nil {
		r.Requests = map[string]*spanState{}
	}
	r.Requests[dir+"/"+e.Str(phases.FieldRequestID)] = s
}
