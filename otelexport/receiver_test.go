package otelexport

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// gotSpan is a span as a receiver decoded it off the wire.
type gotSpan struct {
	Trace, ID, Parent string
	Name              string
	Kind              tracepb.Span_SpanKind
	Start, End        time.Time
	Attrs             map[string]string
	Resource          map[string]string
	Events            []string
	EventAttrs        []map[string]string
	Links             []gotLink
	Error             bool
	Message           string
}

type gotPoint struct {
	Name  string
	Attrs map[string]string
	Count uint64
}

type gotLink struct {
	Trace, Span string
	Attrs       map[string]string
}

// receiver is an OTLP collector stand-in on a loopback port: it decodes the
// protobufs the exporter sends with the collector's own request types
// (collector/trace/v1, collector/metrics/v1), as the collector's OTLP/HTTP
// receiver does, and refuses what the collector would.
type receiver struct {
	URL string
	// gzip, when set, requires Content-Encoding: gzip.
	gzip atomic.Bool

	mu       sync.Mutex
	spans    []gotSpan
	requests int
	// points are histogram points by metric name and attribute set.
	points map[string]gotPoint
}

func (r *receiver) takeMetrics(req *collectormetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.points == nil {
		r.points = map[string]gotPoint{}
	}
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				for _, dp := range m.GetHistogram().GetDataPoints() {
					p := gotPoint{Name: m.GetName(), Attrs: attrMap(dp.GetAttributes()), Count: dp.GetCount()}
					// Cumulative temporality: the last point of a set is its total.
					r.points[p.Name+fmt.Sprint(p.Attrs)] = p
				}
			}
		}
	}
}

// Histogram returns a histogram's counts per mcp.method.name.
func (r *receiver) Histogram(name string) map[string]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]uint64{}
	for _, p := range r.points {
		if p.Name == name {
			out[p.Attrs["mcp.method.name"]] += p.Count
		}
	}
	return out
}

func (r *receiver) take(req *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	for _, rs := range req.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				g := gotSpan{Trace: hex.EncodeToString(s.GetTraceId()), ID: hex.EncodeToString(s.GetSpanId()),
					Parent: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: s.GetKind(),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())).UTC(), End: time.Unix(0, int64(s.GetEndTimeUnixNano())).UTC(),
					Attrs: attrMap(s.GetAttributes()), Resource: res,
					Error: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, Message: s.GetStatus().GetMessage()}
				for _, ev := range s.GetEvents() {
					g.Events = append(g.Events, ev.GetName())
					g.EventAttrs = append(g.EventAttrs, attrMap(ev.GetAttributes()))
				}
				for _, l := range s.GetLinks() {
					g.Links = append(g.Links, gotLink{Trace: hex.EncodeToString(l.GetTraceId()), Span: hex.EncodeToString(l.GetSpanId()), Attrs: attrMap(l.GetAttributes())})
				}
				r.spans = append(r.spans, g)
			}
		}
	}
}

// Spans returns what arrived so far, ordered by start time then name.
func (r *receiver) Spans() []gotSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]gotSpan(nil), r.spans...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.GetKey()] = anyString(kv.GetValue())
	}
	return m
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyString(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

// newHTTPReceiver serves OTLP/HTTP protobuf on 127.0.0.1.
func newHTTPReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want application/x-protobuf", http.StatusBadRequest)
			return
		}
		if req.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		var src io.Reader = req.Body
		if enc := req.Header.Get("Content-Encoding"); enc == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			src = zr
		} else if r.gzip.Load() || enc != "" {
			http.Error(w, "want Content-Encoding gzip", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(src)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out []byte
		switch req.URL.Path {
		case "/v1/traces":
			var msg collectortrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &msg); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.take(&msg)
			out, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		case "/v1/metrics":
			var msg collectormetrics.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &msg); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.takeMetrics(&msg)
			out, _ = proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
		default:
			http.Error(w, "want /v1/traces or /v1/metrics", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// byName indexes spans by name; a name seen twice fails the test.
func byName(t *testing.T, spans []gotSpan) map[string]gotSpan {
	t.Helper()
	m := map[string]gotSpan{}
	for _, s := range spans {
		if _, dup := m[s.Name]; dup {
			t.Fatalf("two spans named %q in %v", s.Name, names(spans))
		}
		m[s.Name] = s
	}
	return m
}

func names(spans []gotSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// wantAttrs checks attributes of span s.
func wantAttrs(t *testing.T, s gotSpan, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got, ok := s.Attrs[k]; !ok || got != v {
			t.Errorf("span %q attribute %s: got %q (present %v), want %q", s.Name, k, got, ok, v)
		}
	}
}

// ledgerScript writes ledger records as the shim would: one clock, one seq.
type ledgerScript struct {
	now    time.Time
	shim   string
	server string
	recs   []ledger.Record
}

func newScript(server string) *ledgerScript {
	return &ledgerScript{now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), shim: "shim_01TESTSHIM" + strings.ToUpper(server), server: server}
}

// add appends a record after d.
func (s *ledgerScript) add(d time.Duration, run string, pid int, p phases.Phase, event string, fields ...ledger.Field) {
	s.now = s.now.Add(d)
	s.recs = append(s.recs, ledger.Record{Time: s.now, Shim: s.shim, Run: run, Seq: uint64(len(s.recs) + 1), Server: s.server,
		PID: pid, Phase: p, Event: event, Fields: fields})
}

func (s *ledgerScript) bytes() []byte {
	var b bytes.Buffer
	for i := range s.recs {
		s.recs[i].Encode(&b)
	}
	return b.Bytes()
}

func (s *ledgerScript) write(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.server+".jsonl")
	if err := os.WriteFile(path, s.bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const ms = time.Millisecond

// healthy is a legacy-era run: launch, handshake, discovery, two calls.
func (s *ledgerScript) healthy(run string, pid int, traceparent string) {
	s.add(0, run, 0, phases.Launch, phases.SpawnRequested, ledger.F("command", "/usr/bin/rates"), ledger.F("argv", []string{"--port", "0"}), ledger.F("generation", 1))
	s.add(5*ms, run, pid, phases.Launch, phases.Spawned, ledger.F("pid", pid), ledger.F("generation", 1))
	s.add(1*ms, run, pid, phases.Handshake, phases.InitializeReceived, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"), ledger.F("client_name", "agent"))
	s.add(12*ms, run, pid, phases.Handshake, phases.InitializeResponded, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"),
		ledger.F("server_name", "rates"), ledger.F("capabilities", []string{"tools"}), ledger.F("latency_ms", 12*ms))
	s.add(1*ms, run, pid, phases.Handshake, phases.InitializedReceived)
	s.add(1*ms, run, pid, phases.Discovery, phases.ToolsListReceived, ledger.F("request_id", "2"))
	s.add(3*ms, run, pid, phases.Discovery, phases.ToolsListResponded, ledger.F("request_id", "2"), ledger.F("page_tools", 2), ledger.F("complete", true),
		ledger.F("tool_count", 2), ledger.F("tools", []string{"convert", "get_rate"}), ledger.F("latency_ms", 3*ms))
	call := []ledger.Field{ledger.F("request_id", "3"), ledger.F("tool", "get_rate"), ledger.F("args_bytes", 16)}
	if traceparent != "" {
		call = append(call, ledger.F(TraceparentField, traceparent))
	}
	s.add(2*ms, run, pid, phases.Execution, phases.ToolCallReceived, call...)
	s.add(1*ms, run, pid, phases.Transport, phases.StdoutNoise, ledger.F("bytes", 9), ledger.F("preview", "debug: hi"))
	s.add(7*ms, run, pid, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "3"), ledger.F("tool", "get_rate"),
		ledger.F("outcome", "success"), ledger.F("latency_ms", 8*ms), ledger.F("result_bytes", 40))
	s.add(1*ms, run, pid, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "4"), ledger.F("tool", "convert"))
	s.add(2*ms, run, pid, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "4"), ledger.F("tool", "convert"),
		ledger.F("outcome", "rpc_error"), ledger.F("latency_ms", 2*ms), ledger.F("code", -32602), ledger.F("message", "bad currency"))
	s.add(5*ms, run, pid, phases.Interruption, phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
	s.add(3*ms, run, pid, phases.Launch, phases.Exited, ledger.F("exit_code", 0), ledger.F("duration_ms", 54*ms),
		ledger.F("stderr_tail", []string{}), ledger.F("requested_by_shim", true), ledger.F("last_event", phases.ToolCallResponded), ledger.F("handshake", true))
}

// crashRestart is a run that dies on a call, then the restarted run that
// takes the session back and answers the next call with isError.
func (s *ledgerScript) crashRestart(run1, run2 string) {
	s.add(0, run1, 0, phases.Launch, phases.SpawnRequested, ledger.F("command", "/usr/bin/rates"), ledger.F("generation", 1))
	s.add(5*ms, run1, 101, phases.Launch, phases.Spawned, ledger.F("pid", 101), ledger.F("generation", 1))
	s.add(1*ms, run1, 101, phases.Handshake, phases.InitializeReceived, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"))
	s.add(10*ms, run1, 101, phases.Handshake, phases.InitializeResponded, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"), ledger.F("latency_ms", 10*ms))
	s.add(1*ms, run1, 101, phases.Handshake, phases.InitializedReceived)
	s.add(1*ms, run1, 101, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "2"), ledger.F("tool", "get_rate"))
	s.add(4*ms, run1, 101, phases.Transport, phases.PartialLineTerminated)
	s.add(0, run1, 101, phases.Interruption, phases.PendingFailed, ledger.F("request_id", "2"), ledger.F("method", "tools/call"),
		ledger.F("direction", "client"), ledger.F("tool", "get_rate"), ledger.F("message", "mcpshim: server rates exited with code 1 before answering"))
	s.add(0, run1, 101, phases.Launch, phases.Exited, ledger.F("exit_code", 1), ledger.F("duration_ms", 22*ms),
		ledger.F("stderr_tail", []string{"fatal: crashed while answering tools/call 2"}), ledger.F("requested_by_shim", false),
		ledger.F("last_event", phases.ToolCallReceived), ledger.F("handshake", true))
	s.add(0, run1, 101, phases.Supervision, phases.RestartScheduled, ledger.F("attempt", 1), ledger.F("delay_ms", 100*ms),
		ledger.F("reason", "exit code 1"), ledger.F("previous_run", run1))
	s.add(100*ms, run2, 0, phases.Launch, phases.SpawnRequested, ledger.F("command", "/usr/bin/rates"), ledger.F("generation", 2), ledger.F("previous_run", run1))
	s.add(4*ms, run2, 102, phases.Launch, phases.Spawned, ledger.F("pid", 102), ledger.F("generation", 2))
	s.add(9*ms, run2, 102, phases.Supervision, phases.HandshakeReplayed, ledger.F("protocol_version", "2025-11-25"), ledger.F("modern", false),
		ledger.F("replayed", []string{"initialize"}), ledger.F("latency_ms", 8*ms))
	s.add(1*ms, run2, 102, phases.Execution, phases.ToolCallReceived, ledger.F("request_id", "3"), ledger.F("tool", "get_rate"))
	s.add(1*ms, run2, 102, phases.Interruption, phases.KillRequested, ledger.F("signal", "SIGTERM"), ledger.F("reason", "test"))
	s.add(2*ms, run2, 102, phases.Execution, phases.ToolCallResponded, ledger.F("request_id", "3"), ledger.F("tool", "get_rate"),
		ledger.F("outcome", "is_error"), ledger.F("latency_ms", 3*ms), ledger.F("result_bytes", 50))
	s.add(2*ms, run2, 102, phases.Launch, phases.Exited, ledger.F("exit_code", 0), ledger.F("duration_ms", 20*ms),
		ledger.F("stderr_tail", []string{}), ledger.F("requested_by_shim", true), ledger.F("handshake", true))
}

// handshakeTimeout is a server that reads initialize and never answers.
func (s *ledgerScript) handshakeTimeout(run string) {
	s.add(0, run, 0, phases.Launch, phases.SpawnRequested, ledger.F("command", "/usr/bin/silent"), ledger.F("generation", 1))
	s.add(5*ms, run, 201, phases.Launch, phases.Spawned, ledger.F("pid", 201), ledger.F("generation", 1))
	s.add(1*ms, run, 201, phases.Handshake, phases.InitializeReceived, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"))
	s.add(999*ms, run, 201, phases.Handshake, phases.HandshakeTimeout, ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", time.Second))
	s.add(400*ms, run, 201, phases.Interruption, phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
	s.add(1*ms, run, 201, phases.Interruption, phases.PendingFailed, ledger.F("request_id", "1"), ledger.F("method", "initialize"),
		ledger.F("direction", "client"), ledger.F("message", "mcpshim: server silent exited before answering"))
	s.add(0, run, 201, phases.Launch, phases.Exited, ledger.F("exit_code", 0), ledger.F("duration_ms", 1406*ms),
		ledger.F("stderr_tail", []string{}), ledger.F("requested_by_shim", true), ledger.F("last_event", phases.HandshakeTimeout), ledger.F("handshake", false))
}
