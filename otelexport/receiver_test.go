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
	recs   []phases.Record
}

func newScript(server string) *ledgerScript {
	return &ledgerScript{now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), shim: "shim_01TESTSHIM" + strings.ToUpper(server), server: server}
}

// add appends a record after d.
func (s *ledgerScript) add(d time.Duration, run string, pid int, p phases.Phase, event string, fields ...phases.Field) {
	s.now = s.now.Add(d)
	s.recs = append(s.recs, phases.Record{Time: s.now, Shim: s.shim, Run: run, Seq: uint64(len(s.recs) + 1), Server: s.server,
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
	s.add(0, run, 0, phases.Launch, phases.SpawnRequested, phases.F("command", "/usr/bin/rates"), phases.F("argv", []string{"--port", "0"}), phases.F("generation", 1))
	s.add(5*ms, run, pid, phases.Launch, phases.Spawned, phases.F("pid", pid), phases.F("generation", 1))
	s.add(1*ms, run, pid, phases.Handshake, phases.InitializeReceived, phases.F("request_id", "1"), phases.F("protocol_version", "2025-11-25"), phases.F("client_name", "agent"))
	s.add(12*ms, run, pid, phases.Handshake, phases.InitializeResponded, phases.F("request_id", "1"), phases.F("protocol_version", "2025-11-25"),
		phases.F("server_name", "rates"), phases.F("capabilities", []string{"tools"}), phases.F("latency_ms", 12*ms))
	s.add(1*ms, run, pid, phases.Handshake, phases.InitializedReceived)
	s.add(1*ms, run, pid, phases.Discovery, phases.ToolsListReceived, phases.F("request_id", "2"))
	s.add(3*ms, run, pid, phases.Discovery, phases.ToolsListResponded, phases.F("request_id", "2"), phases.F("page_tools", 2), phases.F("complete", true),
		phases.F("tool_count", 2), phases.F("tools", []string{"convert", "get_rate"}), phases.F("latency_ms", 3*ms))
	call := []phases.Field{phases.F("request_id", "3"), phases.F("tool", "get_rate"), phases.F("args_bytes", 16)}
	if traceparent != "" {
		call = append(call, phases.F(TraceparentField, traceparent))
	}
	s.add(2*ms, run, pid, phases.Execution, phases.ToolCallReceived, call...)
	s.add(1*ms, run, pid, phases.Transport, phases.StdoutNoise, phases.F("bytes", 9), phases.F("preview", "debug: hi"))
	s.add(7*ms, run, pid, phases.Execution, phases.ToolCallResponded, phases.F("request_id", "3"), phases.F("tool", "get_rate"),
		phases.F("outcome", "success"), phases.F("latency_ms", 8*ms), phases.F("result_bytes", 40))
	s.add(1*ms, run, pid, phases.Execution, phases.ToolCallReceived, phases.F("request_id", "4"), phases.F("tool", "convert"))
	s.add(2*ms, run, pid, phases.Execution, phases.ToolCallResponded, phases.F("request_id", "4"), phases.F("tool", "convert"),
		phases.F("outcome", "rpc_error"), phases.F("latency_ms", 2*ms), phases.F("code", -32602), phases.F("message", "bad currency"))
	s.add(5*ms, run, pid, phases.Interruption, phases.ClientDisconnected, phases.F("reason", "stdin_eof"))
	s.add(3*ms, run, pid, phases.Launch, phases.Exited, phases.F("exit_code", 0), phases.F("duration_ms", 54*ms),
		phases.F("stderr_tail", []string{}), phases.F("requested_by_shim", true), phases.F("last_event", phases.ToolCallResponded), phases.F("handshake", true))
}

// crashRestart is a run that dies on a call, then the restarted run that
// takes the session back and answers the next call with isError.
func (s *ledgerScript) crashRestart(run1, run2 string) {
	s.add(0, run1, 0, phases.Launch, phases.SpawnRequested, phases.F("command", "/usr/bin/rates"), phases.F("generation", 1))
	s.add(5*ms, run1, 101, phases.Launch, phases.Spawned, phases.F("pid", 101), phases.F("generation", 1))
	s.add(1*ms, run1, 101, phases.Handshake, phases.InitializeReceived, phases.F("request_id", "1"), phases.F("protocol_version", "2025-11-25"))
	s.add(10*ms, run1, 101, phases.Handshake, phases.InitializeResponded, phases.F("request_id", "1"), phases.F("protocol_version", "2025-11-25"), phases.F("latency_ms", 10*ms))
	s.add(1*ms, run1, 101, phases.Handshake, phases.InitializedReceived)
	s.add(1*ms, run1, 101, phases.Execution, phases.ToolCallReceived, phases.F("request_id", "2"), phases.F("tool", "get_rate"))
	s.add(4*ms, run1, 101, phases.Transport, phases.PartialLineTerminated)
	s.add(0, run1, 101, phases.Interruption, phases.PendingFailed, phases.F("request_id", "2"), phases.F("method", "tools/call"),
		phases.F("direction", "client"), phases.F("tool", "get_rate"), phases.F("message", "mcpshim: server rates exited with code 1 before answering"))
	s.add(0, run1, 101, phases.Launch, phases.Exited, phases.F("exit_code", 1), phases.F("duration_ms", 22*ms),
		phases.F("stderr_tail", []string{"fatal: crashed while answering tools/call 2"}), phases.F("requested_by_shim", false),
		phases.F("last_event", phases.ToolCallReceived), phases.F("handshake", true))
	s.add(0, run1, 101, phases.Supervision, phases.RestartScheduled, phases.F("attempt", 1), phases.F("delay_ms", 100*ms),
		phases.F("reason", "exit code 1"), phases.F("previous_run", run1))
	s.add(100*ms, run2, 0, phases.Launch, phases.SpawnRequested, phases.F("command", "/usr/bin/rates"), phases.F("generation", 2), phases.F("previous_run", run1))
	s.add(4*ms, run2, 102, phases.Launch, phases.Spawned, phases.F("pid", 102), phases.F("generation", 2))
	s.add(9*ms, run2, 102, phases.Supervision, phases.HandshakeReplayed, phases.F("protocol_version", "2025-11-25"), phases.F("modern", false),
		phases.F("replayed", []string{"initialize"}), phases.F("latency_ms", 8*ms))
	s.add(1*ms, run2, 102, phases.Execution, phases.ToolCallReceived, phases.F("request_id", "3"), phases.F("tool", "get_rate"))
	s.add(1*ms, run2, 102, phases.Interruption, phases.KillRequested, phases.F("signal", "SIGTERM"), phases.F("reason", "test"))
	s.add(2*ms, run2, 102, phases.Execution, phases.ToolCallResponded, phases.F("request_id", "3"), phases.F("tool", "get_rate"),
		phases.F("outcome", "is_error"), phases.F("latency_ms", 3*ms), phases.F("result_bytes", 50))
	s.add(2*ms, run2, 102, phases.Launch, phases.Exited, phases.F("exit_code", 0), phases.F("duration_ms", 20*ms),
		phases.F("stderr_tail", []string{}), phases.F("requested_by_shim", true), phases.F("handshake", true))
}

// handshakeTimeout is a server that reads initialize and never answers.
func (s *ledgerScript) handshakeTimeout(run string) {
	s.add(0, run, 0, phases.Launch, phases.SpawnRequested, phases.F("command", "/usr/bin/silent"), phases.F("generation", 1))
	s.add(5*ms, run, 201, phases.Launch, phases.Spawned, phases.F("pid", 201), phases.F("generation", 1))
	s.add(1*ms, run, 201, phases.Handshake, phases.InitializeReceived, phases.F("request_id", "1"), phases.F("protocol_version", "2025-11-25"))
	s.add(999*ms, run, 201, phases.Handshake, phases.HandshakeTimeout, phases.F("last_event", phases.InitializeReceivedNoResponse), phases.F("timeout_ms", time.Second))
	s.add(400*ms, run, 201, phases.Interruption, phases.ClientDisconnected, phases.F("reason", "stdin_eof"))
	s.add(1*ms, run, 201, phases.Interruption, phases.PendingFailed, phases.F("request_id", "1"), phases.F("method", "initialize"),
		phases.F("direction", "client"), phases.F("message", "mcpshim: server silent exited before answering"))
	s.add(0, run, 201, phases.Launch, phases.Exited, phases.F("exit_code", 0), phases.F("duration_ms", 1406*ms),
		phases.F("stderr_tail", []string{}), phases.F("requested_by_shim", true), phases.F("last_event", phases.HandshakeTimeout), phases.F("handshake", false))
}
