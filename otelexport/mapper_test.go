package otelexport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// mapAll runs the records through a Mapper as the ledger reader gives them.
func mapAll(t *testing.T, m *Mapper, recs []ledger.Record) []*Span {
	t.Helper()
	var out []*Span
	for i := range recs {
		var b bytes.Buffer
		recs[i].Encode(&b)
		e, err := ledger.Decode(b.Bytes())
		if err != nil {
			t.Fatalf("decode %s: %v", b.Bytes(), err)
		}
		out = append(out, m.Add(&e)...)
	}
	return append(out, m.Flush()...) // the end of the records
}

func attr(s *Span, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func find(spans []*Span, name string) *Span {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func TestParseTraceparent(t *testing.T) {
	tests := []struct {
		in    string
		valid bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true}, // not sampled upstream: still the parent
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false},
		{"", false},
	}
	for _, tt := range tests {
		sc := parseTraceparent(tt.in)
		if sc.IsValid() != tt.valid {
			t.Errorf("parseTraceparent(%q) valid = %v, want %v", tt.in, sc.IsValid(), tt.valid)
		}
		if tt.valid && (!sc.IsRemote() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736") {
			t.Errorf("parseTraceparent(%q) = %v, want the remote trace 4bf92f…", tt.in, sc)
		}
	}
}

func TestSignalURL(t *testing.T) {
	tests := []struct{ base, signal, want string }{
		{"http://127.0.0.1:4318", "traces", "http://127.0.0.1:4318/v1/traces"},
		{"http://127.0.0.1:4318/", "metrics", "http://127.0.0.1:4318/v1/metrics"},
		{"https://otel.example.com/otlp", "traces", "https://otel.example.com/otlp/v1/traces"},
		{"https://otel.example.com/v1/traces", "traces", "https://otel.example.com/v1/traces"},
	}
	for _, tt := range tests {
		if got := signalURL(tt.base, tt.signal); got != tt.want {
			t.Errorf("signalURL(%q, %q) = %q, want %q", tt.base, tt.signal, got, tt.want)
		}
	}
}

func TestNewExporterRejects(t *testing.T) {
	for _, cfg := range []Config{{Endpoint: "127.0.0.1:4318"}, {Endpoint: "ftp://collector"}, {Protocol: "http/json"}, {Protocol: "grpc"}} {
		if _, err := NewExporter(t.Context(), cfg); err == nil {
			t.Errorf("NewExporter(%+v) = nil error, want one", cfg)
		}
	}
}

// The root span renders the run's verdict, the one `mcpshim ledger` shows:
// its outcome, failure, cause and reason (a banner the client skipped is
// ENDED here too, not protocol_error).
func TestRootOutcome(t *testing.T) {
	exit := func(code int, requested, handshake bool, tail ...string) []ledger.Field {
		return []ledger.Field{ledger.F("exit_code", code), ledger.F("requested_by_shim", requested), ledger.F("handshake", handshake),
			ledger.F("stderr_tail", tail)}
	}
	type rec struct {
		event  string
		fields []ledger.Field
	}
	spawn := rec{phases.SpawnRequested, nil}
	spawned := rec{phases.Spawned, nil}
	init := rec{phases.InitializeReceived, []ledger.Field{ledger.F("request_id", "1")}}
	answered := rec{phases.InitializeResponded, []ledger.Field{ledger.F("request_id", "1"), ledger.F("latency_ms", 3*ms)}}
	initialized := rec{phases.InitializedReceived, nil}
	tests := []struct {
		name      string
		recs      []rec
		outcome   string
		errorType string
	}{
		{"ended", []rec{spawn, spawned, init, answered, initialized, {phases.Exited, exit(0, true, true)}}, verdict.Ended, ""},
		{"crashed", []rec{spawn, spawned, init, answered, initialized, {phases.Exited, exit(1, false, true, "boom")}}, verdict.Crashed, "crashed"},
		{"killed", []rec{spawn, spawned, init, answered, initialized, {phases.Exited, append(exit(-1, false, true), ledger.F("signal", "SIGKILL"))}},
			verdict.Crashed, "crashed"},
		{"exited early", []rec{spawn, spawned, {phases.Exited, exit(1, false, false, "API_KEY is not set")}}, verdict.Exited, "exited"},
		{"spawn failed", []rec{spawn, {phases.SpawnFailed, []ledger.Field{ledger.F("error_class", "not_found"), ledger.F("error", "no such file")}}},
			verdict.Exited, "not_found"},
		{"refused", []rec{spawn, spawned, init, {phases.InitializeFailed, []ledger.Field{ledger.F("request_id", "1"), ledger.F("code", -32602), ledger.F("message", "unsupported version")}},
			{phases.Exited, exit(0, true, false)}}, verdict.ProtocolError, "protocol_error"},
		{"banner not skipped", []rec{spawn, spawned, {phases.StdoutNoise, []ledger.Field{ledger.F("preview", "Starting")}}, init, answered,
			{phases.Exited, exit(0, true, true)}}, verdict.ProtocolError, "protocol_error"},
		{"banner skipped", []rec{spawn, spawned, {phases.StdoutNoise, []ledger.Field{ledger.F("preview", "Starting")}}, init, answered, initialized,
			{phases.Exited, exit(0, true, true)}}, verdict.Ended, ""},
		{"timeout", []rec{spawn, spawned, {phases.HandshakeTimeout, nil}, {phases.Exited, exit(0, true, false)}}, verdict.Timeout, "timeout"},
		{"modern", []rec{spawn, spawned, {phases.ModernRequest, []ledger.Field{ledger.F("protocol_version", "2026-07-28")}}, {phases.Exited, exit(0, true, false)}},
			verdict.Ended, ""},
		{"remote refused", []rec{{phases.ConnectFailed, []ledger.Field{ledger.F("error_class", "refused"), ledger.F("error", "connection refused")}}},
			verdict.Unreachable, "refused"},
		{"remote 401", []rec{{phases.Connected, nil}, init, {phases.HTTPExchange, []ledger.Field{ledger.F("method", "initialize"), ledger.F("status", 401)}},
			{phases.AuthFailed, []ledger.Field{ledger.F("status", 401)}}, {phases.Disconnected, []ledger.Field{ledger.F("reason", "stdin_eof")}}},
			verdict.AuthRequired, "auth_required"},
	}
	for _, tt := range tests {
		s := newScript("srv")
		for _, r := range tt.recs {
			s.add(ms, "run_1", 5, phases.Launch, r.event, r.fields...)
		}
		var fold verdict.Fold
		for i := range s.recs {
			e := ledger.EntryOf(&s.recs[i])
			fold.Add(&e)
		}
		want := verdict.Judge(&fold, s.recs[len(s.recs)-1].Time, false)
		spans := mapAll(t, NewMapper(nil), s.recs)
		root := find(spans, "run srv")
		if root == nil {
			t.Fatalf("%s: no root span in %d spans", tt.name, len(spans))
		}
		if got := attr(root, "mcpshim.outcome"); got != tt.outcome || got != want.Outcome {
			t.Errorf("%s: outcome %q, want %q (the verdict: %q)", tt.name, got, tt.outcome, want.Outcome)
		}
		if got := attr(root, "error.type"); got != tt.errorType {
			t.Errorf("%s: error.type %q, want %q", tt.name, got, tt.errorType)
		}
		wantCode, desc := codes.Unset, ""
		if want.Failed {
			wantCode, desc = codes.Error, want.Reason
		}
		if st := root.Status; st.Code != wantCode || st.Description != desc || attr(root, "mcpshim.verdict.reason") != want.Reason ||
			attr(root, "mcpshim.verdict.cause") != want.Cause || attr(root, "mcpshim.verdict.failed") != fmt.Sprint(want.Failed) {
			t.Errorf("%s: status %v %q, reason %q, cause %q, failed %s; want the verdict %v %q %q %v", tt.name, st.Code, st.Description,
				attr(root, "mcpshim.verdict.reason"), attr(root, "mcpshim.verdict.cause"), attr(root, "mcpshim.verdict.failed"), wantCode, want.Reason, want.Cause, want.Failed)
		}
	}
}

// A response whose request record never reached the exporter (a full queue)
// still makes its span, starting latency_ms before the answer.
func TestMissingRequestRecord(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 5, phases.Launch, phases.Spawned)
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "9"), ledger.F("tool", "get_rate"),
		ledger.F("outcome", "success"), ledger.F("latency_ms", 250*ms))
	m := NewMapper(nil)
	spans := mapAll(t, m, s.recs)
	call := find(spans, "tools/call get_rate")
	if call == nil {
		t.Fatalf("no tools/call span in %d spans", len(spans))
	}
	if d := call.EndTime.Sub(call.StartTime); d != 250*ms {
		t.Errorf("span lasted %v, want the recorded latency 250ms", d)
	}
	if call.Parent.SpanID() != RootSpanID("run_1") {
		t.Errorf("parent %v, want the run's root %v", call.Parent.SpanID(), RootSpanID("run_1"))
	}
	if m.OpenRuns() != 1 {
		t.Errorf("open runs %d, want the run still open", m.OpenRuns())
	}
}

func TestEventsCapped(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 5, phases.Launch, phases.SpawnRequested)
	for i := 0; i < maxEvents+10; i++ {
		s.add(ms, "run_1", 5, phases.Transport, phases.StdoutNoise, ledger.F("bytes", i))
	}
	s.add(ms, "run_1", 5, phases.Launch, phases.Exited, ledger.F("exit_code", 0), ledger.F("requested_by_shim", true))
	s.add(ms, "", 0, phases.LedgerPhase, phases.RecordsLost, ledger.F("count", 3))
	m := NewMapper(nil)
	root := find(mapAll(t, m, s.recs), "run srv")
	if len(root.Events) != maxEvents || root.DroppedEvents != 10 {
		t.Errorf("root has %d events, %d dropped; want %d kept, 10 dropped", len(root.Events), root.DroppedEvents, maxEvents)
	}
	if m.Orphans != 1 {
		t.Errorf("orphans %d, want the record without a run", m.Orphans)
	}
}

// Finish ends the runs a session left open, marked unfinished.
func TestFinish(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 5, phases.Launch, phases.SpawnRequested)
	s.add(time.Second, "run_1", 5, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "1"), ledger.F("tool", "t"))
	m := NewMapper(nil)
	mapAll(t, m, s.recs)
	spans := m.Finish()
	root, call := find(spans, "run srv"), find(spans, "tools/call t")
	if root == nil || call == nil {
		t.Fatalf("Finish gave %d spans, want the root and the call in flight", len(spans))
	}
	if !root.EndTime.Equal(s.now) || attr(root, "mcpshim.unfinished") != "true" {
		t.Errorf("root ends %v unfinished=%q, want %v unfinished=true", root.EndTime, attr(root, "mcpshim.unfinished"), s.now)
	}
	if attr(call, "error.type") != "unfinished" {
		t.Errorf("call error.type %q, want unfinished", attr(call, "error.type"))
	}
	if m.OpenRuns() != 0 {
		t.Errorf("open runs %d after Finish, want 0", m.OpenRuns())
	}
}

// The live exporter reads records without the JSON round trip; it must see
// exactly what the batch exporter reads back from the line.
func TestEntryOfMatchesDecode(t *testing.T) {
	now := time.Now() // with a monotonic reading, as the shim's records have
	values := []any{"text", "", true, false, 0, -3, int64(1) << 40, uint64(1) << 63, 0.0, 1.5, 13.225, 3.0, 1e-7, 1e21, 2e300,
		math.NaN(), math.Inf(1), math.Inf(-1), 12345678 * time.Nanosecond, 3 * time.Second, []string{}, []string(nil), []string{"a", "b"},
		[]ledger.Field{ledger.F("x", 1), ledger.F("y", []string{"z"}), ledger.F("x", "again")}, struct{ A int }{7}}
	for i, v := range values {
		r := ledger.Record{Time: now, Shim: "shim_1", Run: "run_1", Seq: 9, Server: "srv", PID: 42, Phase: phases.Launch,
			Event: phases.Spawned, Fields: []ledger.Field{ledger.F("v", v), ledger.F("pid", 43)}}
		if i%2 == 1 {
			r.Origin = phases.OriginServer
		}
		var b bytes.Buffer
		r.Encode(&b)
		want, err := ledger.Decode(b.Bytes())
		if err != nil {
			t.Fatalf("decode %s: %v", b.Bytes(), err)
		}
		if got := entryOf(&r); !reflect.DeepEqual(got, want) {
			t.Errorf("entryOf(field %#v) = %#v, want %#v (decoded from %s)", v, got, want, b.Bytes())
		}
	}
}

// link is the span s links to with mcpshim.link=kind, or nil.
func link(s *Span, kind string) *Link {
	for i, l := range s.Links {
		for _, kv := range l.Attributes {
			if string(kv.Key) == "mcpshim.link" && kv.Value.AsString() == kind {
				return &s.Links[i]
			}
		}
	}
	return nil
}

// openRequests is how many request spans of run are still open.
func openRequests(m *Mapper, run string) int {
	if r := m.st.Runs[run]; r != nil {
		return len(r.Requests)
	}
	return 0
}

// An MRTR call is two requests: the first round ends when the server asks
// for input, and the client's retry, under a new id, links back to it.
func TestInputRequiredRounds(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 5, phases.Launch, phases.Spawned)
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "1"), ledger.F("tool", "book"))
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallInputRequired, ledger.F("request_id", "1"), ledger.F("tool", "book"),
		ledger.F("outcome", "input_required"), ledger.F("latency_ms", ms))
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallContinued, ledger.F("request_id", "2"), ledger.F("tool", "book"))
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "2"), ledger.F("tool", "book"),
		ledger.F("outcome", "success"), ledger.F("latency_ms", ms))
	m := NewMapper(nil)
	var spans []*Span
	for _, sp := range mapAll(t, m, s.recs) {
		if sp.Name != "launch" {
			spans = append(spans, sp)
		}
	}
	if n := openRequests(m, "run_1"); n != 0 {
		t.Fatalf("%d request spans open after both rounds were answered, want 0", n)
	}
	if len(spans) != 2 {
		t.Fatalf("got spans %v, want the two rounds of tools/call book", spanNames(spans))
	}
	first, second := spans[0], spans[1]
	for _, sp := range spans {
		if sp.Name != "tools/call book" || sp.Status.Code != codes.Unset {
			t.Errorf("span %q status %v, want tools/call book, not an error", sp.Name, sp.Status)
		}
	}
	if got := attr(first, "mcpshim.outcome"); got != "input_required" {
		t.Errorf("first round outcome %q, want input_required", got)
	}
	if got := attr(second, "jsonrpc.request.id"); got != "2" {
		t.Errorf("second round request id %q, want 2", got)
	}
	l := link(second, "previous_round")
	if l == nil || l.SpanContext.SpanID() != first.SpanContext.SpanID() {
		t.Errorf("second round links %v, want the first round %v as previous_round", second.Links, first.SpanContext.SpanID())
	}
}

// A task-augmented call's request ends with the CreateTaskResult; the
// tasks/result that brings the outcome carries it and links to the call.
func TestTaskCreatedCall(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 5, phases.Launch, phases.Spawned)
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "1"), ledger.F("tool", "render"), ledger.F("task", true))
	s.add(ms, "run_1", 5, phases.Execution, phases.ToolCallTaskCreated, ledger.F("request_id", "1"), ledger.F("tool", "render"),
		ledger.F("outcome", "task_created"), ledger.F("latency_ms", ms), ledger.F("task_id", "T1"))
	s.add(ms, "run_1", 5, phases.Execution, phases.RequestReceived, ledger.F("request_id", "2"), ledger.F("method", "tasks/get"), ledger.F("direction", "client"))
	s.add(ms, "run_1", 5, phases.Execution, phases.RequestResponded, ledger.F("request_id", "2"), ledger.F("method", "tasks/get"),
		ledger.F("direction", "client"), ledger.F("outcome", "success"), ledger.F("latency_ms", ms))
	s.add(ms, "run_1", 5, phases.Execution, phases.RequestReceived, ledger.F("request_id", "3"), ledger.F("method", "tasks/result"), ledger.F("direction", "client"))
	s.add(10*ms, "run_1", 5, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "1"), ledger.F("tool", "render"),
		ledger.F("outcome", "is_error"), ledger.F("latency_ms", 14*ms), ledger.F("task_id", "T1"), ledger.F("via_request_id", "3"))
	m := NewMapper(nil)
	spans := mapAll(t, m, s.recs)
	if n := openRequests(m, "run_1"); n != 0 {
		t.Fatalf("%d request spans open after the task's result, want 0", n)
	}
	call, result := find(spans, "tools/call render"), find(spans, "tasks/result render")
	if call == nil || result == nil || find(spans, "tasks/get") == nil {
		t.Fatalf("spans %v, want tools/call render, tasks/get and tasks/result render", spanNames(spans))
	}
	if call.Status.Code != codes.Unset || attr(call, "mcpshim.task_id") != "T1" {
		t.Errorf("call status %v task_id %q, want no error and T1: the request was answered with a task", call.Status, attr(call, "mcpshim.task_id"))
	}
	if got := attr(result, "error.type"); got != "tool_error" {
		t.Errorf("tasks/result error.type %q, want tool_error (the call's outcome)", got)
	}
	if got := attr(result, "jsonrpc.request.id"); got != "3" {
		t.Errorf("tasks/result request id %q, want 3 (its own)", got)
	}
	if d := result.EndTime.Sub(result.StartTime); d != 10*ms {
		t.Errorf("tasks/result lasted %v, want 10ms from its own request", d)
	}
	l := link(result, "task_created")
	if l == nil || l.SpanContext.SpanID() != call.SpanContext.SpanID() {
		t.Errorf("tasks/result links %v, want the call %v as task_created", result.Links, call.SpanContext.SpanID())
	}
}

func spanNames(spans []*Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func TestBaseResource(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want map[string]string // "" for absent
	}{
		{nil, map[string]string{"service.name": "mcpshim", "service.version": "v1.2.3", "process.pid": fmt.Sprint(os.Getpid())}},
		{map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=a,k=v%2Cw, bad ,=x,host.name=h1"},
			map[string]string{"service.name": "a", "k": "v,w", "host.name": "h1", "bad": ""}},
		{map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=a", "OTEL_SERVICE_NAME": "b"}, map[string]string{"service.name": "b"}},
		{map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "k=%zz"}, map[string]string{"k": ""}},
	}
	for _, c := range cases {
		attrs := BaseResource(Identity{Version: "v1.2.3", Self: true}, func(k string) string { return c.env[k] })
		got := map[string]string{}
		for _, kv := range attrs {
			got[string(kv.Key)] = kv.Value.Emit()
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("env %v: %s=%q, want %q (all %v)", c.env, k, got[k], v, got)
			}
		}
	}
	res := NewResource(BaseResource(Identity{}, func(string) string { return "service.instance.id=x,mcpshim.server=y" }), "srv", "shim_1")
	got := map[string]string{}
	for _, kv := range res.Attributes {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	if got["mcpshim.server"] != "srv" || got["service.instance.id"] != "shim_1" || got["process.pid"] != "" {
		t.Errorf("resource %v: want the run's mcpshim.server=srv and service.instance.id=shim_1 over the environment's, no process.pid without Self", got)
	}
}

func TestResolveOff(t *testing.T) {
	cases := []struct {
		endpoint string
		env      map[string]string
		want     bool
	}{
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{"http://c:4318", map[string]string{"OTEL_SDK_DISABLED": "true"}, true},
		{"", nil, false},
	}
	for _, c := range cases {
		_, on := Config{Endpoint: c.endpoint, Getenv: func(k string) string { return c.env[k] }}.Resolve()
		if on != c.want {
			t.Errorf("endpoint %q env %v: on %v, want %v", c.endpoint, c.env, on, c.want)
		}
	}
}

// What the supervisor records after an exit is an event of the run's root,
// which waits for it, not a span of no duration.
func TestAfterExitRecordsAreRootEvents(t *testing.T) {
	s := newScript("srv")
	s.add(0, "run_1", 7, phases.Launch, phases.Spawned)
	s.add(ms, "run_1", 7, phases.Launch, phases.Exited, ledger.F("exit_code", 1))
	s.add(0, "run_1", 7, phases.Supervision, phases.RestartScheduled, ledger.F("attempt", 1), ledger.F("delay_ms", time.Duration(0)))
	s.add(0, "run_1", 7, phases.Supervision, phases.RestartsExhausted, ledger.F("reason", "5 restarts in 1m0s"))
	m := NewMapper(nil)
	var spans []*Span
	for i := range s.recs {
		e := ledger.EntryOf(&s.recs[i])
		spans = append(spans, m.Add(&e)...)
	}
	if root := find(spans, "run srv"); root != nil {
		t.Fatalf("root emitted at the exit, before what follows it")
	}
	spans = append(spans, m.Flush()...)
	root := find(spans, "run srv")
	if root == nil || len(root.Events) != 2 || root.Events[0].Name != phases.RestartScheduled || root.Events[1].Name != phases.RestartsExhausted {
		t.Fatalf("spans %v, root %+v: want the root with restart_scheduled and restarts_exhausted events", spanNames(spans), root)
	}
	if find(spans, phases.RestartScheduled) != nil || find(spans, phases.RestartsExhausted) != nil {
		t.Errorf("spans %v: a record after the exit is a span, want only the root's event", spanNames(spans))
	}
	if m.OpenRuns() != 0 {
		t.Errorf("open runs %d after Flush, want 0", m.OpenRuns())
	}
}
