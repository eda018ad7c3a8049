package main

import (
	"compress/gzip"
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

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP receiver on a loopback port that decodes what
// arrives with the collector's own request types, as the OpenTelemetry
// Collector's otlp receiver does (it cannot be installed here).
type collector struct {
	url     string
	mu      sync.Mutex
	spans   []string // span names
	metrics []string // metric names
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
