package main

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpshim-dev/mcpshim/proc"
)

// collector is an OTLP/HTTP receiver on a loopback port that decodes what
// arrives with the collector's own request types, as the OpenTelemetry
// Collector's otlp receiver does (it cannot be installed here).
type collector struct {
	url     string
	mu      sync.Mutex
	spans   []string // span names
	metrics []string // metric names
	full    []otlpSpan
	points  map[string][]*metricspb.HistogramDataPoint // by metric name
}

// otlpSpan is a span as it arrived, its values as text.
type otlpSpan struct {
	Name            string
	Attrs, Resource map[string]string
	Error           bool // status ERROR
	Status          string
	Start, End      uint64
	TraceID, SpanID string
	Parent          string
	EventNames      []string
}

func kvText(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetArrayValue() != nil:
			var parts []string
			for _, x := range v.GetArrayValue().GetValues() {
				parts = append(parts, x.GetStringValue())
			}
			out[kv.GetKey()] = "[" + strings.Join(parts, " ") + "]"
		case v.GetValue() == nil:
			out[kv.GetKey()] = ""
		default:
			switch x := v.GetValue().(type) {
			case *commonpb.AnyValue_StringValue:
				out[kv.GetKey()] = x.StringValue
			case *commonpb.AnyValue_IntValue:
				out[kv.GetKey()] = fmt.Sprint(x.IntValue)
			case *commonpb.AnyValue_BoolValue:
				out[kv.GetKey()] = fmt.Sprint(x.BoolValue)
			case *commonpb.AnyValue_DoubleValue:
				out[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
			}
		}
	}
	return out
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want a POST of application/x-protobuf", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req collectortrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(b, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range req.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					for _, s := range ss.GetSpans() {
						c.spans = append(c.spans, s.GetName())
						g := otlpSpan{Name: s.GetName(), Attrs: kvText(s.GetAttributes()), Resource: kvText(rs.GetResource().GetAttributes()),
							Error: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, Status: s.GetStatus().GetMessage(),
							Start: s.GetStartTimeUnixNano(), End: s.GetEndTimeUnixNano(), TraceID: hex.EncodeToString(s.GetTraceId()),
							SpanID: hex.EncodeToString(s.GetSpanId()), Parent: hex.EncodeToString(s.GetParentSpanId())}
						for _, ev := range s.GetEvents() {
							g.EventNames = append(g.EventNames, ev.GetName())
						}
						c.full = append(c.full, g)
					}
				}
			}
		case "/v1/metrics":
			var req collectormetrics.ExportMetricsServiceRequest
			if err := proto.Unmarshal(b, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rm := range req.GetResourceMetrics() {
				for _, sm := range rm.GetScopeMetrics() {
					for _, m := range sm.GetMetrics() {
						c.metrics = append(c.metrics, m.GetName())
						if c.points == nil {
							c.points = map[string][]*metricspb.HistogramDataPoint{}
						}
						c.points[m.GetName()] = append(c.points[m.GetName()], m.GetHistogram().GetDataPoints()...)
					}
				}
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// span is the one span named name; the test fails without one.
func (c *collector) span(t *testing.T, name string) otlpSpan {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []otlpSpan
	for _, s := range c.full {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q among %q, want 1", len(found), name, c.spans)
	}
	return found[0]
}

// wantSpan checks a span's attributes (want "" for an attribute that must be
// absent) and its status: "" for unset, else the ERROR status's description.
func wantSpan(t *testing.T, s otlpSpan, status string, attrs map[string]string) {
	t.Helper()
	for k, v := range attrs {
		got, ok := s.Attrs[k]
		if v == "" && ok {
			t.Errorf("span %q: attribute %s=%q, want none", s.Name, k, got)
		} else if v != "" && got != v {
			t.Errorf("span %q: attribute %s=%q, want %q", s.Name, k, got, v)
		}
	}
	if got := map[bool]string{true: "ERROR " + s.Status, false: ""}[s.Error]; got != status && !(status != "" && got == "ERROR "+status) {
		t.Errorf("span %q: status %q, want %q", s.Name, got, status)
	}
}

func (c *collector) got() (spans, metrics []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans), slices.Clone(c.metrics)
}

// A session behind --otlp reaches a real OTLP/HTTP receiver: its spans when
// it ends, and the operation duration histogram.
func TestOTLPLiveSession(t *testing.T) {
	col := newCollector(t)
	s := start(t, true, []string{"--otlp", col.url}, "fixture", "healthy")
	legacySession(s)
	if code := s.finish(); code != 0 {
		t.Fatalf("shim exited %d; stderr:\n%s", code, s.stderr.String())
	}
	// The shim exports before it exits: what it sent has arrived.
	spans, metrics := col.got()
	for _, want := range []string{"run test", "launch", "handshake", "initialize", "tools/list", "tools/call echo"} {
		if !slices.Contains(spans, want) {
			t.Errorf("spans %q: no %q", spans, want)
		}
	}
	if !slices.Contains(metrics, "mcp.server.operation.duration") {
		t.Errorf("metrics %q: no mcp.server.operation.duration", metrics)
	}
	// One session, recorded when it ends, healthy: no error.type.
	col.mu.Lock()
	points := col.points["mcp.server.session.duration"]
	col.mu.Unlock()
	if len(points) != 1 || points[0].GetCount() != 1 || points[0].GetSum() <= 0 {
		t.Fatalf("mcp.server.session.duration points %v, want one session with a duration", points)
	}
	if attrs := kvText(points[0].GetAttributes()); attrs["network.transport"] != "pipe" || attrs["mcp.protocol.version"] == "" || attrs["error.type"] != "" {
		t.Errorf("mcp.server.session.duration attributes %v, want network.transport=pipe, the protocol, no error.type", attrs)
	}
	if strings.Contains(s.stderr.String(), "otlp") {
		t.Errorf("stderr mentions otlp for a healthy collector:\n%s", s.stderr.String())
	}
}

// A collector that is down costs the session nothing but a line at its end;
// a protocol that is not built in is said once and the session carries on.
func TestOTLPCollectorDownOrRefused(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close() // nothing listens there now
	cases := []struct {
		flags []string
		want  string
	}{
		{[]string{"--otlp", url}, "spans exported"},
		{[]string{"--otlp", url, "--otlp-protocol", "grpc"}, "grpc is not built in; carrying on without it"},
	}
	for _, c := range cases {
		s := start(t, true, c.flags, "fixture", "healthy")
		legacySession(s)
		if code := s.finish(); code != 0 {
			t.Fatalf("%v: shim exited %d; stderr:\n%s", c.flags, code, s.stderr.String())
		}
		if !strings.Contains(s.stderr.String(), c.want) {
			t.Errorf("%v: stderr got\n%s\nwant %q", c.flags, s.stderr.String(), c.want)
		}
		if len(s.entries()) == 0 {
			t.Errorf("%v: the ledger is empty", c.flags)
		}
	}
}

// mcpshim ledger export ships a ledger file to the receiver.
func TestLedgerExportToReceiver(t *testing.T) {
	s := start(t, true, nil, "fixture", "healthy")
	legacySession(s)
	if code := s.finish(); code != 0 {
		t.Fatalf("shim exited %d", code)
	}
	col := newCollector(t)
	cmd := exec.Command(builtShim(t), "ledger", "export", "--otlp", col.url, "--state", "off", s.ledger)
	cmd.Env = append(os.Environ(), "MCPSHIM_LEDGER_DIR="+filepath.Dir(s.ledger))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ledger export: %v\n%s", err, out)
	}
	spans, _ := col.got()
	if !slices.Contains(spans, "run test") || !slices.Contains(spans, "tools/call echo") {
		t.Errorf("ledger export %q: got spans %q, want the run's", out, spans)
	}
}

// A session through the shim exports the MCP conventions' attributes: the
// resource of resources/read, the prompt of prompts/get (and its span name),
// the JSON-RPC error's message as the status, and the shim's own -31000
// answer to a call the server died on as an error like the server's.
func TestOTLPConventions(t *testing.T) {
	col := newCollector(t)
	s := start(t, true, []string{"--otlp", col.url, "--max-restarts", "0"}, "fixture", "healthy", "--crash-on-call", "2")
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
	s.call("3", "resources/read", `{"uri":"file:///srv/report.pdf"}`)
	s.call("4", "prompts/get", `{"name":"analyze-code"}`)
	if line := s.call("5", "tools/call", `{"name":"echo","arguments":{"text":"crash"}}`); !strings.Contains(line, "-31000") {
		t.Fatalf("the call the server died on got %s, want the shim's -31000", line)
	}
	s.finish()
	wantSpan(t, col.span(t, "resources/read"), "ERROR Method not found", map[string]string{"mcp.method.name": "resources/read",
		"mcp.resource.uri": "file:///srv/report.pdf", "error.type": "-32601", "rpc.response.status_code": "-32601", "mcpshim.uri": ""})
	wantSpan(t, col.span(t, "prompts/get analyze-code"), "ERROR Method not found", map[string]string{"mcp.method.name": "prompts/get",
		"gen_ai.prompt.name": "analyze-code", "error.type": "-32601", "rpc.response.status_code": "-32601", "mcpshim.prompt": ""})
	var died otlpSpan
	for _, sp := range col.full {
		if sp.Name == "tools/call echo" && sp.Attrs["jsonrpc.request.id"] == "5" {
			died = sp
		}
	}
	if died.Name == "" {
		t.Fatalf("no span of call 5 among %q", col.spans)
	}
	if !died.Error || !strings.HasPrefix(died.Status, "mcpshim: server test") {
		t.Errorf("call 5: status error=%v %q, want ERROR with the shim's message", died.Error, died.Status)
	}
	wantSpan(t, died, "ERROR "+died.Status, map[string]string{"error.type": "-31000", "rpc.response.status_code": "-31000"})
	noEmptySpans(t, col)
}

// noEmptySpans fails on a span that does not end after it starts: Jaeger's
// sanitizer calls it a negative duration and warns.
func noEmptySpans(t *testing.T, col *collector) {
	t.Helper()
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, s := range col.full {
		if s.End <= s.Start {
			t.Errorf("span %q (%v) lasts %d ns, want more than 0", s.Name, s.Attrs["jsonrpc.request.id"], int64(s.End-s.Start))
		}
	}
}

// The resource says which shim on which machine: the SDKs' variables
// (OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES' service.name), the
// shim's version, host and process; the server's pid is its spans'.
func TestOTLPResource(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_SERVICE_NAME", "fleet-a")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=ignored, deployment.environment.name=prod,team=a%20b")
	s := start(t, true, []string{"--otlp", col.url}, "fixture", "healthy")
	legacySession(s)
	shimPID := s.cmd.Process.Pid
	if code := s.finish(); code != 0 {
		t.Fatalf("shim exited %d; stderr:\n%s", code, s.stderr.String())
	}
	host, _ := os.Hostname()
	launch := col.span(t, "launch")
	want := map[string]string{"service.name": "fleet-a", "deployment.environment.name": "prod", "team": "a b", "host.name": host,
		"process.pid": fmt.Sprint(shimPID), "process.executable.name": filepath.Base(builtShim(t)), "mcpshim.server": "test"}
	for k, v := range want {
		if launch.Resource[k] != v {
			t.Errorf("resource %s=%q, want %q (resource %v)", k, launch.Resource[k], v, launch.Resource)
		}
	}
	if launch.Resource["service.version"] == "" || launch.Resource["service.instance.id"] == "" {
		t.Errorf("resource %v: want service.version and service.instance.id", launch.Resource)
	}
	var serverPID string
	for _, e := range s.entries() {
		if e.Event == "spawned" {
			serverPID = fmt.Sprint(e.PID)
		}
	}
	for _, name := range []string{"launch", "run test"} {
		wantSpan(t, col.span(t, name), "", map[string]string{"mcpshim.server_pid": serverPID, "process.pid": ""})
	}
}

// --capture full exports a call's arguments and result as the conventions'
// opt-in gen_ai.tool.call.arguments and .result, redacted, not a body.
func TestOTLPCaptureFull(t *testing.T) {
	col := newCollector(t)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	s := start(t, true, []string{"--otlp", col.url, "--capture", "full"}, "fixture", "healthy")
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"use `+token+`"}}`)
	s.finish()
	call := col.span(t, "tools/call echo")
	wantSpan(t, call, "", map[string]string{"gen_ai.tool.call.arguments": `{"text":"use [REDACTED]"}`,
		"gen_ai.tool.call.result": `{"content":[{"type":"text","text":"use [REDACTED]"}]}`, "mcpshim.body": ""})
	for k, v := range call.Attrs {
		if strings.Contains(v, token) {
			t.Errorf("attribute %s carries the token: %s", k, v)
		}
	}
}

// The launch span names the command and the variables whose values the shim
// hid; every variable's name, PATH and cwd only with --capture full.
func TestOTLPLaunch(t *testing.T) {
	t.Setenv("DEPLOY_TOKEN", "tok-123456789")
	for _, capture := range []string{"meta", "full"} {
		col := newCollector(t)
		s := start(t, true, []string{"--otlp", col.url, "--capture", capture}, "fixture", "healthy")
		legacySession(s)
		s.finish()
		launch := col.span(t, "launch")
		command := ""
		for _, e := range s.entries() {
			if e.Event == "spawn_requested" {
				command = e.Str("command")
			}
		}
		if command == "" || launch.Attrs["mcpshim.command"] != command || launch.Attrs["mcpshim.argv"] != "[fixture healthy]" {
			t.Errorf("--capture %s: launch %v, want the command and its argv", capture, launch.Attrs)
		}
		if got := launch.Attrs["mcpshim.env_redacted"]; capture == "meta" && !strings.Contains(got, "DEPLOY_TOKEN") {
			t.Errorf("--capture meta: mcpshim.env_redacted %q, want DEPLOY_TOKEN in it", got)
		}
		for _, k := range []string{"mcpshim.env_names", "mcpshim.path", "mcpshim.cwd"} {
			if _, ok := launch.Attrs[k]; ok != (capture == "full") {
				t.Errorf("--capture %s: launch has %s %v, want %v", capture, k, ok, capture == "full")
			}
		}
	}
}

// A run whose shim was killed by SIGKILL has no exit record: ledger export
// ends it at its last record with the verdict mcpshim ledger gives,
// UNRECORDED, root span and all, rather than waiting for an exit that will
// never come.
func TestLedgerExportKilledShim(t *testing.T) {
	s := start(t, true, nil, "fixture", "healthy")
	s.call("1", "initialize", initParams)
	spawned := s.waitEvent("spawned")
	if err := s.cmd.Process.Kill(); err != nil { // SIGKILL: the shim records nothing more
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
	deadline := time.Now().Add(eventWait)
	for proc.Alive(spawned.PID) { // its guard ends the server
		if time.Now().After(deadline) {
			t.Fatalf("server pid %d still alive %v after its shim was killed", spawned.PID, eventWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	col := newCollector(t)
	out, err := exec.Command(builtShim(t), "ledger", "export", "--otlp", col.url, "--state", "off", s.ledger).CombinedOutput()
	if err != nil {
		t.Fatalf("ledger export: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "still going") || !strings.Contains(string(out), "1 runs UNRECORDED") {
		t.Errorf("ledger export said %q, want the run UNRECORDED, not still going", out)
	}
	root := col.span(t, "run test")
	wantSpan(t, root, "ERROR "+root.Status, map[string]string{"mcpshim.outcome": "UNRECORDED", "error.type": "unrecorded"})
	if !strings.Contains(root.Status, "the shim was killed") {
		t.Errorf("root status %q, want the judge's reason (the shim was killed)", root.Status)
	}
	if launch := col.span(t, "launch"); launch.Parent != root.SpanID {
		t.Errorf("launch parent %s, want the root %s", launch.Parent, root.SpanID)
	}
}

// Each signal's endpoint stands alone, as the SDKs read the variables: a
// signal's own _ENDPOINT is used as it is, the base one gets /v1/traces or
// /v1/metrics, and OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER=none turn
// off their signal only. Configured only by the environment, no --otlp.
func TestOTLPSignalsAlone(t *testing.T) {
	all := []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED"}
	cases := []struct {
		name           string
		env            func(url string) map[string]string
		spans, metrics bool
	}{
		{"metrics endpoint alone", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u + "/v1/metrics"}
		}, false, true},
		{"traces endpoint alone", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/v1/traces"}
		}, true, false},
		{"base endpoint", func(u string) map[string]string { return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u} }, true, true},
		{"base endpoint, traces off", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_TRACES_EXPORTER": "none"}
		}, false, true},
		{"base endpoint, metrics off", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_METRICS_EXPORTER": "none"}
		}, true, false},
		{"metrics endpoint, SDK disabled", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u + "/v1/metrics", "OTEL_SDK_DISABLED": "true"}
		}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := newCollector(t)
			for _, k := range all {
				t.Setenv(k, "")
			}
			env := c.env(col.url)
			for k, v := range env {
				t.Setenv(k, v)
			}
			s := start(t, true, nil, "fixture", "healthy")
			legacySession(s)
			if code := s.finish(); code != 0 {
				t.Fatalf("env %v: shim exited %d; stderr:\n%s", env, code, s.stderr.String())
			}
			spans, metrics := col.got()
			if got := len(spans) > 0; got != c.spans {
				t.Errorf("env %v: got spans %q, want spans %v", env, spans, c.spans)
			}
			wantMetrics := []string(nil)
			if c.metrics {
				wantMetrics = []string{"mcp.server.operation.duration", "mcp.server.session.duration"}
			}
			slices.Sort(metrics)
			if metrics = slices.Compact(metrics); !slices.Equal(metrics, wantMetrics) {
				t.Errorf("env %v: got metrics %q, want %q", env, metrics, wantMetrics)
			}
			if strings.Contains(s.stderr.String(), "otlp") {
				t.Errorf("env %v: stderr mentions otlp for a healthy collector:\n%s", env, s.stderr.String())
			}
		})
	}
}

// The 2026-07-28 era has no initialize: the handshake span runs from the
// request that opens the session (server/discover, or the first request
// carrying the protocol version in _meta) to the server's answer, and
// carries the version. It was 0 ms at the first request's record, which
// Jaeger calls a negative duration.
func TestOTLPModernHandshake(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, c := range []struct{ opening, first string }{{"server/discover", "server/discover"}, {"a request", "tools/list"}} {
		t.Run(c.opening, func(t *testing.T) {
			col := newCollector(t)
			s := start(t, true, []string{"--otlp", col.url}, "fixture", "healthy")
			s.call("1", c.first, `{`+meta+`}`)
			s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"hi"},`+meta+`}`)
			if code := s.finish(); code != 0 {
				t.Fatalf("shim exited %d; stderr:\n%s", code, s.stderr.String())
			}
			hs, first := col.span(t, "handshake"), col.span(t, c.first)
			if hs.Start > first.Start || hs.End < first.End || hs.End <= hs.Start {
				t.Errorf("%s first: handshake %d..%d (%d ns), %s %d..%d; want the handshake to last from the request to its answer",
					c.first, hs.Start, hs.End, int64(hs.End-hs.Start), c.first, first.Start, first.End)
			}
			wantSpan(t, hs, "", map[string]string{"mcp.protocol.version": "2026-07-28"})
			noEmptySpans(t, col)
		})
	}
}
