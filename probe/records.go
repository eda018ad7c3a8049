package probe

import (
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// A probe is judged the way a shim's run is: its timeline becomes the
// ledger's records, seen from the server's side as the shim sees it (the
// probe's request_sent initialize is the server's initialize_received), and
// the verdict package judges them. `mcpshim probe` prints that verdict and
// writes the same records to the server's ledger, so both say the same.

// timelineEvents maps a step and its method to the ledger's event.
var timelineEvents = map[string][2]string{
	"request_sent " + mcp.MethodInitialize:             {string(phases.Handshake), phases.InitializeReceived},
	"response_received " + mcp.MethodInitialize:        {string(phases.Handshake), phases.InitializeResponded},
	"request_sent " + mcp.MethodDiscover:               {string(phases.Handshake), phases.DiscoverReceived},
	"response_received " + mcp.MethodDiscover:          {string(phases.Handshake), phases.DiscoverResponded},
	"request_sent " + mcp.MethodListTools:              {string(phases.Discovery), phases.ToolsListReceived},
	"notification_sent " + mcp.NotificationInitialized: {string(phases.Handshake), phases.InitializedReceived},
}

// failedEvents name a request that was answered with an error, or whose
// answer the probe could not use.
var failedEvents = map[string]string{
	mcp.MethodInitialize: phases.InitializeFailed,
	mcp.MethodDiscover:   phases.DiscoverFailed,
	mcp.MethodListTools:  phases.ToolsListFailed,
}

// Records are the probe's timeline as ledger records of one run, with
// origin probe, in order; the caller sets the run.
func (r *Result) Records() []ledger.Record {
	var out []ledger.Record
	add := func(at time.Time, p phases.Phase, event string, fields ...ledger.Field) {
		out = append(out, ledger.Record{Time: at, Server: r.Server, PID: r.PID, Origin: phases.OriginProbe, Phase: p, Event: event, Fields: fields})
	}
	remote := r.Transport == "http"
	// An answer the probe could not use is recorded as its request's
	// failure (protocol_error), not as an answer.
	unusable := map[string]bool{}
	for _, st := range r.Timeline {
		if st.Event == "protocol_error" {
			unusable[st.Method] = true
		}
	}
	if remote && !r.connectFailed() {
		add(r.Started, phases.Launch, phases.Connected, ledger.F(phases.FieldURL, r.url), ledger.F(phases.FieldTransport, "streamable-http"))
	}
	var callSent time.Time // the canary's tools/call: its answer's latency
	for _, st := range r.Timeline {
		switch st.Event {
		case "canary":
			add(st.At, phases.Execution, phases.CanaryChecked, ledger.F(phases.FieldTool, st.Tool), ledger.F(phases.FieldOutcome, st.Result), ledger.F(phases.FieldDetail, st.Detail))
		case "request_sent", "response_received":
			if st.Method != mcp.MethodCallTool {
				r.timelineEvent(st, unusable, add)
				continue
			}
			if st.Event == "request_sent" {
				callSent = st.At
				add(st.At, phases.Execution, phases.ToolCallReceived, ledger.F(phases.FieldTool, st.Tool))
				continue
			}
			fields := []ledger.Field{ledger.F(phases.FieldTool, st.Tool), ledger.F(phases.FieldOutcome, st.Result), ledger.F(phases.FieldLatencyMS, st.At.Sub(callSent))}
			if msg, ok := strings.CutPrefix(st.Detail, "error: "); ok {
				fields = append(fields, ledger.F(phases.FieldCode, st.Code), ledger.F(phases.FieldMessage, msg))
			}
			add(st.At, phases.Execution, phases.ToolCallResponded, fields...)
		case "spawned":
			add(st.At, phases.Launch, phases.Spawned, ledger.F("pid", r.PID))
		case "spawn_failed":
			add(st.At, phases.Launch, phases.SpawnFailed, ledger.F(phases.FieldErrorClass, st.Class), ledger.F(phases.FieldError, st.Detail), ledger.F(phases.FieldHint, st.Hint))
		case "connect_failed":
			add(st.At, phases.Launch, phases.ConnectFailed, ledger.F(phases.FieldURL, r.url), ledger.F(phases.FieldErrorClass, st.Class), ledger.F(phases.FieldError, st.Detail))
		case "tools_listed":
			add(st.At, phases.Discovery, phases.ToolsListResponded, ledger.F(phases.FieldComplete, true),
				ledger.F(phases.FieldToolCount, len(r.Tools)), ledger.F("tools", r.ToolNames()))
		case "stdout_noise":
			add(st.At, phases.Transport, phases.StdoutNoise, ledger.F(phases.FieldPreview, st.Detail))
		case "protocol_error":
			if event, ok := failedEvents[st.Method]; ok {
				add(st.At, phases.Handshake, event, ledger.F(phases.FieldMessage, strings.TrimPrefix(st.Detail, st.Method+": ")))
			}
		case "http_status":
			add(st.At, phases.Transport, phases.HTTPExchange, ledger.F(phases.FieldHTTPMethod, "POST"), ledger.F(phases.FieldMethod, st.Method), ledger.F(phases.FieldStatus, st.Code))
			if st.Code/100 == 3 {
				add(st.At, phases.Transport, phases.RedirectRefused, ledger.F(phases.FieldStatus, st.Code), ledger.F(phases.FieldLocation, st.Detail), ledger.F(phases.FieldMethod, st.Method))
			}
			if st.Code == 401 || st.Code == 403 {
				add(st.At, phases.Handshake, phases.AuthFailed, ledger.F(phases.FieldStatus, st.Code), ledger.F(phases.FieldWWWAuthenticate, st.Detail), ledger.F("realm", r.Realm))
			}
		case "deadline":
			add(st.At, phases.Handshake, phases.HandshakeTimeout, ledger.F(phases.FieldLastEvent, r.LastEvent), ledger.F(phases.FieldWaiting, st.Method),
				ledger.F(phases.FieldTimeoutMS, r.timeout))
		case "stopped", "exited":
			if remote {
				add(st.At, phases.Launch, phases.Disconnected, ledger.F(phases.FieldReason, st.Detail), ledger.F(phases.FieldRequestedByShim, true))
				continue
			}
			fields := []ledger.Field{ledger.F(phases.FieldRequestedByShim, st.Event == "stopped"), ledger.F(phases.FieldStderrTail, r.StderrTail)}
			if r.ExitCode != nil {
				fields = append(fields, ledger.F(phases.FieldExitCode, *r.ExitCode))
			}
			if r.Signal != "" {
				fields = append(fields, ledger.F(phases.FieldSignal, r.Signal))
			}
			add(st.At, phases.Launch, phases.Exited, fields...)
		default:
			r.timelineEvent(st, unusable, add)
		}
	}
	return out
}

// timelineEvent adds the record of a request sent, an answer received or a
// notification: the handshake's and tools/list's.
func (r *Result) timelineEvent(st Step, unusable map[string]bool, add func(time.Time, phases.Phase, string, ...ledger.Field)) {
	pe, ok := timelineEvents[st.Event+" "+st.Method]
	if !ok || st.Event == "response_received" && unusable[st.Method] {
		return
	}
	event := pe[1]
	fields := []ledger.Field{}
	if msg, ok := strings.CutPrefix(st.Detail, "error: "); ok {
		if failed, known := failedEvents[st.Method]; known {
			event = failed
		}
		fields = append(fields, ledger.F(phases.FieldCode, st.Code), ledger.F(phases.FieldMessage, msg))
	}
	if event == phases.InitializeResponded || event == phases.DiscoverResponded {
		fields = append(fields, ledger.F(phases.FieldProtocolVersion, r.Protocol))
		if r.ServerInfo != nil {
			fields = append(fields, ledger.F(phases.FieldServerName, r.ServerInfo.Name), ledger.F(phases.FieldServerVersion, r.ServerInfo.Version))
		}
	}
	add(st.At, phases.Phase(pe[0]), event, fields...)
}

// endpoint is a URL as the ledger shows it: no query, no user info.
func endpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// connectFailed reports whether the remote server could not be reached.
func (r *Result) connectFailed() bool {
	for _, st := range r.Timeline {
		if st.Event == "connect_failed" {
			return true
		}
	}
	return false
}

// judge sets the outcome from the verdict on the probe's records.
func (r *Result) judge(timeout time.Duration) {
	r.timeout = timeout
	var fold verdict.Fold
	for i, rec := range r.Records() {
		rec.Seq = uint64(i + 1) // the order the probe saw them in
		e := ledger.EntryOf(&rec)
		fold.Add(&e)
	}
	v := verdict.Judge(&fold, r.Started.Add(r.Elapsed), false)
	r.Outcome, r.Detail, r.Cause, r.Advice = Outcome(v.Outcome), v.Reason, v.Cause, v.Advice
}

// Record appends one probe of a server to that server's ledger in dir with
// origin probe, so `mcpshim ledger` shows probe history beside the shim's
// runs: the records the probe's verdict was judged from, and the result.
// dir "" and a result from the cache record nothing.
func Record(dir, shimID string, r Result) {
	if dir == "" || r.Cached {
		return
	}
	l, err := ledger.Open(ledger.Options{Path: ledger.PathIn(dir, r.Server), Shim: shimID, Server: r.Server})
	if err != nil {
		return // the probe's own report is what the user reads; the ledger is a bonus
	}
	defer l.Close()
	run := ledger.NewID("run", r.Started)
	for _, rec := range r.Records() {
		rec.Run = run
		l.Write(&rec)
	}
	l.Write(&ledger.Record{Time: r.Started.Add(r.Elapsed), Run: run, PID: r.PID, Origin: phases.OriginProbe, Phase: phases.LedgerPhase,
		Event: phases.ProbeResult, Fields: []ledger.Field{ledger.F(phases.FieldOutcome, string(r.Outcome)), ledger.F(phases.FieldDetail, r.Detail),
			ledger.F("elapsed_ms", r.Elapsed), ledger.F(phases.FieldAttempts, r.Attempts), ledger.F(phases.FieldTransport, r.Transport)}})
}
