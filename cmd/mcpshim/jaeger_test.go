package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// jaegerConfig runs Jaeger v2 as the all-in-one does, in-memory storage,
// with only what the test reads, on loopback: the OTLP/HTTP receiver and the
// query API. Its own metrics are off, so no fixed port is taken.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// jaegerBinary is the Jaeger .ci/install-jaeger.sh built ($MCPSHIM_JAEGER).
// Without it the test skips, and under CI=true fails: .ci/run builds it.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MCPSHIM_JAEGER")
	if bin != "" {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	why := fmt.Sprintf("no Jaeger at MCPSHIM_JAEGER=%q: build it with `sh .ci/install-jaeger.sh` (~9 min) and set MCPSHIM_JAEGER to the path it prints", bin)
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startJaeger runs Jaeger and returns its OTLP/HTTP and query base URLs once
// its query API answers.
func startJaeger(t *testing.T) (otlp, query string) {
	t.Helper()
	bin := jaegerBinary(t)
	otlpAddr, queryAddr, grpcAddr := loopbackAddr(t), loopbackAddr(t), loopbackAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, queryAddr, grpcAddr, otlpAddr), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.Buffer{}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	query = "http://" + queryAddr
	deadline := time.Now().Add(eventWait)
	for {
		if resp, err := http.Get(query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "http://" + otlpAddr, query
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("jaeger exited (%v) before its query API answered:\n%s", err, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger's query API did not answer in %v:\n%s", eventWait, logs.String())
		}
	}
}

// jaegerTrace is a trace as Jaeger's query API (/api/traces) gives it.
type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string     `json:"serviceName"`
		Tags        []jaegerKV `json:"tags"`
	} `json:"processes"`
	Warnings []string `json:"warnings"`
}

type jaegerSpan struct {
	SpanID        string                                      `json:"spanID"`
	OperationName string                                      `json:"operationName"`
	References    []struct{ RefType, TraceID, SpanID string } `json:"references"`
	StartTime     int64                                       `json:"startTime"` // µs
	Duration      int64                                       `json:"duration"`  // µs
	Tags          []jaegerKV                                  `json:"tags"`
	ProcessID     string                                      `json:"processID"`
	Warnings      []string                                    `json:"warnings"`
	Logs          []struct {
		Fields []jaegerKV `json:"fields"`
	} `json:"logs"`
}

type jaegerKV struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func tagMap(kvs []jaegerKV) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.Key] = fmt.Sprint(kv.Value)
	}
	return out
}

// jaegerTraces polls the query API until the service's traces hold want
// spans in all (the in-memory store takes them a batch at a time).
func jaegerTraces(t *testing.T, query, service string, want int) []jaegerTrace {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	var got []jaegerTrace
	n := 0
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, query+"/api/traces?service="+service+"&limit=100&lookback=1h", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var doc struct {
				Data []jaegerTrace `json:"data"`
			}
			if json.Unmarshal(body, &doc) == nil {
				got, n = doc.Data, 0
				for _, tr := range got {
					n += len(tr.Spans)
				}
				if n >= want {
					cancel()
					return got
				}
			}
		}
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("jaeger has %d spans of %s after %v, want %d", n, service, eventWait, want)
	return nil
}

// TestJaeger sends a session through the built shim to a real Jaeger
// (v1.75.0, .ci/install-jaeger.sh) over OTLP/HTTP, configured the way the
// SDKs are (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES), and reads it back from Jaeger's query API: two
// runs (a crash and its restart), the spans' parents, the MCP conventions'
// attributes and statuses, the resource, and no warning from Jaeger's
// adjusters (invalid parent, negative duration, clock skew) on any span.
func TestJaeger(t *testing.T) {
	otlp, query := startJaeger(t)
	service := fmt.Sprintf("mcpshim-jaeger-%d", os.Getpid())
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp+"/v1/traces")
	t.Setenv("OTEL_SERVICE_NAME", service)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=ci")
	s := start(t, true, nil, "fixture", "healthy", "--crash-on-call", "2")
	s.call("1", "initialize", initParams)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
	s.call("3", "resources/read", `{"uri":"file:///srv/report.pdf"}`)
	s.call("4", "prompts/get", `{"name":"analyze-code"}`)
	if line := s.call("5", "tools/call", `{"name":"echo","arguments":{"text":"crash"}}`); !strings.Contains(line, "-31000") {
		t.Fatalf("the call the server died on got %s, want the shim's -31000", line)
	}
	s.waitEvent("handshake_replayed") // the restarted run took the session back
	s.call("6", "tools/call", `{"name":"echo","arguments":{"text":"again"}}`)
	if code := s.finish(); code != 0 {
		t.Fatalf("shim exited %d; stderr:\n%s", code, s.stderr.String())
	}
	// Run 1: root, launch, handshake, initialize, 4 requests; run 2: root,
	// launch, handshake (replayed), 1 call.
	traces := jaegerTraces(t, query, service, 12)
	if len(traces) != 2 {
		t.Fatalf("%d traces, want 2 (one per run)", len(traces))
	}
	type span struct {
		trace, id, parent string
		duration          int64
		tags, resource    map[string]string
		events            []map[string]string // each event's fields, its name as "event"
	}
	byName := map[string][]span{}
	for _, tr := range traces {
		if len(tr.Warnings) > 0 {
			t.Errorf("trace %s: jaeger warns %q", tr.TraceID, tr.Warnings)
		}
		for _, sp := range tr.Spans {
			if len(sp.Warnings) > 0 {
				t.Errorf("span %q: jaeger warns %q", sp.OperationName, sp.Warnings)
			}
			p := span{trace: tr.TraceID, id: sp.SpanID, duration: sp.Duration, tags: tagMap(sp.Tags),
				resource: tagMap(tr.Processes[sp.ProcessID].Tags)}
			for _, l := range sp.Logs {
				p.events = append(p.events, tagMap(l.Fields))
			}
			for _, ref := range sp.References {
				if ref.RefType == "CHILD_OF" && ref.TraceID == tr.TraceID {
					p.parent = ref.SpanID
				}
			}
			if got := tr.Processes[sp.ProcessID].ServiceName; got != service {
				t.Errorf("span %q: service %q, want %q", sp.OperationName, got, service)
			}
			byName[sp.OperationName] = append(byName[sp.OperationName], p)
		}
	}
	one := func(name string) span {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans %q, want 1 (spans %v)", len(byName[name]), name, keys(byName))
		}
		return byName[name][0]
	}
	roots := byName["run test"]
	if len(roots) != 2 {
		t.Fatalf("%d root spans \"run test\", want 2 (spans %v)", len(roots), keys(byName))
	}
	rootOf := map[string]span{}
	for _, r := range roots {
		rootOf[r.trace] = r
	}
	for name, spans := range byName {
		for _, sp := range spans {
			if name != "run test" && sp.parent == "" {
				t.Errorf("span %q has no parent in its trace", name)
			}
		}
	}
	host, _ := os.Hostname()
	res := one("resources/read").resource
	for k, v := range map[string]string{"host.name": host, "deployment.environment.name": "ci", "mcpshim.server": "test",
		"process.executable.name": filepath.Base(builtShim(t)), "process.pid": fmt.Sprint(s.cmd.Process.Pid)} {
		if res[k] != v {
			t.Errorf("resource %s=%q, want %q (all %v)", k, res[k], v, res)
		}
	}
	if res["service.version"] == "" {
		t.Errorf("resource %v: no service.version", res)
	}
	want := func(sp span, name string, tags map[string]string) {
		t.Helper()
		for k, v := range tags {
			if sp.tags[k] != v {
				t.Errorf("span %q: %s=%q, want %q", name, k, sp.tags[k], v)
			}
		}
	}
	read := one("resources/read")
	want(read, "resources/read", map[string]string{"mcp.method.name": "resources/read", "mcp.resource.uri": "file:///srv/report.pdf",
		"error.type": "-32601", "rpc.response.status_code": "-32601", "otel.status_code": "ERROR",
		"otel.status_description": "Method not found", "network.transport": "pipe", "jsonrpc.request.id": "3"})
	want(one("prompts/get analyze-code"), "prompts/get", map[string]string{"gen_ai.prompt.name": "analyze-code", "otel.status_code": "ERROR"})
	var died, ok int
	for _, c := range byName["tools/call echo"] {
		if c.tags["gen_ai.operation.name"] != "execute_tool" || c.tags["gen_ai.tool.name"] != "echo" {
			t.Errorf("call %s: tags %v, want execute_tool echo", c.tags["jsonrpc.request.id"], c.tags)
		}
		switch c.tags["jsonrpc.request.id"] {
		case "5":
			died++
			want(c, "tools/call 5", map[string]string{"error.type": "-31000", "rpc.response.status_code": "-31000", "otel.status_code": "ERROR"})
			if !strings.HasPrefix(c.tags["otel.status_description"], "mcpshim: server test") {
				t.Errorf("call 5: status %q, want the shim's message", c.tags["otel.status_description"])
			}
		case "2", "6":
			ok++
			if c.tags["otel.status_code"] == "ERROR" {
				t.Errorf("call %s: ERROR, want a success", c.tags["jsonrpc.request.id"])
			}
		}
	}
	if died != 1 || ok != 2 {
		t.Errorf("calls: %d died, %d answered; want 1 and 2", died, ok)
	}
	// The restart is an event of the crashed run's root, not a span of 0 ms.
	if _, ok := byName["restart_scheduled"]; ok {
		t.Errorf("restart_scheduled is a span, want an event of the crashed run's root")
	}
	crashed := rootOf[read.trace]
	want(crashed, "the crashed run's root", map[string]string{"mcpshim.outcome": "CRASHED", "otel.status_code": "ERROR", "error.type": "crashed"})
	restarted := false
	for _, ev := range crashed.events {
		restarted = restarted || (ev["event"] == "restart_scheduled" && ev["mcpshim.attempt"] == "1")
	}
	if !restarted {
		t.Errorf("crashed root events %v, want restart_scheduled (attempt 1)", crashed.events)
	}
	if crashed.tags["mcpshim.server_pid"] == "" || crashed.tags["process.pid"] != "" {
		t.Errorf("crashed root: tags %v, want mcpshim.server_pid and no process.pid", crashed.tags)
	}
}

// TestJaegerModern: a 2026-07-28 session, which has no initialize, in the
// same real Jaeger: its handshake span lasts from the first request, which
// carries the protocol version, to the server's answer, with no warning
// from Jaeger (a 0 ms span is its "negative duration").
func TestJaegerModern(t *testing.T) {
	otlp, query := startJaeger(t)
	service := fmt.Sprintf("mcpshim-jaeger-modern-%d", os.Getpid())
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp+"/v1/traces")
	t.Setenv("OTEL_SERVICE_NAME", service)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	s := start(t, true, nil, "fixture", "healthy")
	s.call("1", "tools/list", `{`+meta+`}`)
	s.call("2", "tools/call", `{"name":"echo","arguments":{"text":"hi"},`+meta+`}`)
	if code := s.finish(); code != 0 {
		t.Fatalf("shim exited %d; stderr:\n%s", code, s.stderr.String())
	}
	// Root, launch, handshake, discovery, tools/list, tools/call.
	traces := jaegerTraces(t, query, service, 6)
	if len(traces) != 1 {
		t.Fatalf("%d traces, want 1", len(traces))
	}
	spans := map[string]jaegerSpan{}
	for _, sp := range traces[0].Spans {
		if len(sp.Warnings) > 0 {
			t.Errorf("span %q: jaeger warns %q", sp.OperationName, sp.Warnings)
		}
		spans[sp.OperationName] = sp
	}
	hs, list := spans["handshake"], spans["tools/list"]
	if hs.Duration <= 0 || hs.StartTime > list.StartTime || hs.StartTime+hs.Duration < list.StartTime+list.Duration {
		t.Errorf("handshake %d µs from %d, tools/list %d µs from %d: want the handshake to cover the first request and its answer",
			hs.Duration, hs.StartTime, list.Duration, list.StartTime)
	}
	if v := tagMap(hs.Tags)["mcp.protocol.version"]; v != "2026-07-28" {
		t.Errorf("handshake mcp.protocol.version %q, want 2026-07-28", v)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
