package otelexport

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// exportFiles runs a batch export to r and returns what arrived.
func exportFiles(t *testing.T, r *receiver, protocol string, files []string, state string) BatchResult {
	t.Helper()
	ctx := context.Background()
	exp, err := NewExporter(ctx, Config{Endpoint: r.URL, Protocol: protocol, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ExportFiles(ctx, exp, files, BatchOptions{State: state})
	if err != nil {
		t.Fatalf("ExportFiles(%v): %v", files, err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestHealthyRunSpanTree(t *testing.T) {
	for _, protocol := range []string{ProtocolHTTP, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			r := newHTTPReceiver(t)
			s := newScript("rates")
			run := "run_01HEALTHY"
			s.healthy(run, 4242, "")
			res := exportFiles(t, r, protocol, []string{s.write(t)}, "")
			spans := r.Spans()
			if res.Records != len(s.recs) || res.Spans != len(spans) || res.Open != 0 {
				t.Errorf("result %+v for %d records, %d spans received; want all records, all spans, no open run", res, len(s.recs), len(spans))
			}
			got := byName(t, spans)
			want := []string{"run rates", "launch", "handshake", "initialize", "discovery", "tools/list", "tools/call get_rate", "tools/call convert"}
			if len(spans) != len(want) {
				t.Fatalf("spans %v, want %v", names(spans), want)
			}
			root := got["run rates"]
			trace := TraceID(run).String()
			parents := map[string]string{"launch": "run rates", "handshake": "run rates", "initialize": "handshake",
				"discovery": "run rates", "tools/list": "discovery", "tools/call get_rate": "run rates", "tools/call convert": "run rates"}
			for _, name := range want {
				sp, ok := got[name]
				if !ok {
					t.Fatalf("no span %q in %v", name, names(spans))
				}
				if sp.Trace != trace {
					t.Errorf("span %q trace %s, want %s (derived from %s)", name, sp.Trace, trace, run)
				}
				if p := parents[name]; p != "" && sp.Parent != got[p].ID {
					t.Errorf("span %q parent %s, want %q (%s)", name, sp.Parent, p, got[p].ID)
				}
				if sp.Resource["service.name"] != "mcpshim" || sp.Resource["mcpshim.server"] != "rates" {
					t.Errorf("span %q resource %v, want service.name=mcpshim mcpshim.server=rates", name, sp.Resource)
				}
				if sp.Attrs["mcp.session.id"] != s.shim {
					t.Errorf("span %q mcp.session.id %q, want the shim id %q", name, sp.Attrs["mcp.session.id"], s.shim)
				}
				if sp.Start.After(sp.End) || sp.Start.Before(root.Start) || sp.End.After(root.End) {
					t.Errorf("span %q [%v, %v] outside root [%v, %v]", name, sp.Start, sp.End, root.Start, root.End)
				}
			}
			if root.Parent != "" || root.ID != RootSpanID(run).String() || root.Error {
				t.Errorf("root %+v: want no parent, id %s, no error", root, RootSpanID(run))
			}
			wantAttrs(t, root, map[string]string{"mcpshim.outcome": "ENDED", "mcpshim.server_pid": "4242", "network.transport": "pipe",
				"mcp.protocol.version": "2025-11-25", "mcpshim.exit_code": "0", "mcpshim.run": run})
			if want := s.recs[0].Time; !root.Start.Equal(want) {
				t.Errorf("root start %v, want spawn_requested's %v", root.Start, want)
			}
			if want := s.recs[len(s.recs)-1].Time; !root.End.Equal(want) {
				t.Errorf("root end %v, want exited's %v", root.End, want)
			}
			if !slices.Contains(root.Events, phases.ClientDisconnected) {
				t.Errorf("root events %v, want client_disconnected", root.Events)
			}
			wantAttrs(t, got["launch"], map[string]string{"mcpshim.command": "/usr/bin/rates", "mcpshim.argv": "[--port 0]", "mcpshim.server_pid": "4242"})
			wantAttrs(t, got["initialize"], map[string]string{"mcp.method.name": "initialize", "jsonrpc.request.id": "1",
				"mcpshim.client_name": "agent", "mcpshim.server_name": "rates"})
			wantAttrs(t, got["discovery"], map[string]string{"mcpshim.tool_count": "2", "mcpshim.tools": "[convert get_rate]"})

			call := got["tools/call get_rate"]
			if call.Kind != tracepb.Span_SPAN_KIND_SERVER || call.Error {
				t.Errorf("tools/call get_rate kind %v error %v, want SERVER, no error", call.Kind, call.Error)
			}
			wantAttrs(t, call, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "get_rate", "gen_ai.operation.name": "execute_tool",
				"jsonrpc.request.id": "3", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25", "mcpshim.outcome": "success",
				"mcpshim.args_bytes": "16", "mcpshim.result_bytes": "40"})
			if d := call.End.Sub(call.Start); d != 8*ms {
				t.Errorf("tools/call get_rate lasted %v, want its latency 8ms", d)
			}
			if len(call.Events) != 1 || call.Events[0] != phases.StdoutNoise {
				t.Errorf("tools/call get_rate events %v, want the stdout_noise written while it ran", call.Events)
			} else if call.EventAttrs[0]["mcpshim.preview"] != "debug: hi" {
				t.Errorf("stdout_noise attributes %v, want mcpshim.preview=debug: hi", call.EventAttrs[0])
			}
			bad := got["tools/call convert"]
			if !bad.Error || bad.Message != "bad currency" {
				t.Errorf("tools/call convert error %v %q, want error \"bad currency\"", bad.Error, bad.Message)
			}
			wantAttrs(t, bad, map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602", "mcpshim.outcome": "rpc_error"})
		})
	}
}

func TestCrashRestartLinksRuns(t *testing.T) {
	r := newHTTPReceiver(t)
	s := newScript("rates")
	run1, run2 := "run_01CRASHED", "run_02RESTARTED"
	s.crashRestart(run1, run2)
	exportFiles(t, r, ProtocolHTTP, []string{s.write(t)}, "")

	var first, second []gotSpan
	for _, sp := range r.Spans() {
		switch sp.Trace {
		case TraceID(run1).String():
			first = append(first, sp)
		case TraceID(run2).String():
			second = append(second, sp)
		default:
			t.Errorf("span %q in trace %s, want one of the two runs' traces", sp.Name, sp.Trace)
		}
	}
	a, b := byName(t, first), byName(t, second)
	root1 := a["run rates"]
	if !root1.Error || root1.Attrs["error.type"] != "crashed" || root1.Attrs["mcpshim.outcome"] != verdict.Crashed ||
		!strings.HasPrefix(root1.Message, "fatal: crashed while answering tools/call 2 (exit 1, ") {
		t.Errorf("first root error %v %q attrs %v, want CRASHED with the last stderr line", root1.Error, root1.Message, root1.Attrs)
	}
	lost := a["tools/call get_rate"]
	if !lost.Error || lost.Attrs["error.type"] != "-31000" || lost.Attrs["rpc.response.status_code"] != "-31000" ||
		lost.Message != "mcpshim: server rates exited with code 1 before answering" || lost.Parent != root1.ID {
		t.Errorf("lost call error %v %q attrs %v parent %s, want the shim's -31000 answer under the first root", lost.Error, lost.Message, lost.Attrs, lost.Parent)
	}
	if _, ok := a[phases.RestartScheduled]; ok {
		t.Errorf("restart_scheduled is a span, want an event of the first root")
	}
	if i := slices.Index(root1.Events, phases.RestartScheduled); i < 0 || root1.EventAttrs[i]["mcpshim.attempt"] != "1" || root1.EventAttrs[i]["mcpshim.delay_ms"] != "100" {
		t.Errorf("first root events %v %v, want restart_scheduled with attempt 1 and delay_ms 100", root1.Events, root1.EventAttrs)
	}

	root2 := b["run rates"]
	if len(root2.Links) != 1 || root2.Links[0].Trace != root1.Trace || root2.Links[0].Span != root1.ID ||
		root2.Links[0].Attrs["mcpshim.link"] != "previous_run" {
		t.Fatalf("second root links %+v, want one previous_run link to %s/%s", root2.Links, root1.Trace, root1.ID)
	}
	if root2.Error || root2.Attrs["mcpshim.previous_run"] != run1 {
		t.Errorf("second root error %v attrs %v, want ENDED with previous_run %s", root2.Error, root2.Attrs, run1)
	}
	hs := b["handshake"]
	if hs.Error || hs.End.Sub(hs.Start) != 8*ms || hs.Attrs["mcpshim.replayed"] != "[initialize]" {
		t.Errorf("replayed handshake %+v, want an 8ms span marked replayed", hs)
	}
	toolErr := b["tools/call get_rate"]
	if !toolErr.Error || toolErr.Attrs["error.type"] != "tool_error" || toolErr.Attrs["mcpshim.outcome"] != "is_error" {
		t.Errorf("isError call error %v attrs %v, want error.type tool_error", toolErr.Error, toolErr.Attrs)
	}
	if len(toolErr.Events) != 1 || toolErr.Events[0] != phases.KillRequested {
		t.Errorf("isError call events %v, want kill_requested", toolErr.Events)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	r := newHTTPReceiver(t)
	s := newScript("silent")
	run := "run_01SILENT"
	s.handshakeTimeout(run)
	exportFiles(t, r, ProtocolHTTP, []string{s.write(t)}, "")
	got := byName(t, r.Spans())
	hs, root, init := got["handshake"], got["run silent"], got["initialize"]
	if !hs.Error || hs.Attrs["error.type"] != phases.HandshakeTimeout || hs.Attrs["mcpshim.last_event"] != phases.InitializeReceivedNoResponse {
		t.Errorf("handshake error %v attrs %v, want handshake_timeout after initialize_received_no_response", hs.Error, hs.Attrs)
	}
	if d := hs.End.Sub(hs.Start); d != 999*ms {
		t.Errorf("handshake lasted %v, want from initialize_received to the timeout, 999ms", d)
	}
	if !root.Error || root.Attrs["error.type"] != "timeout" || root.Attrs["mcpshim.outcome"] != verdict.Timeout {
		t.Errorf("root error %v attrs %v, want TIMEOUT", root.Error, root.Attrs)
	}
	if !init.Error || init.Attrs["error.type"] != "-31000" || init.Parent != hs.ID {
		t.Errorf("initialize error %v attrs %v parent %s, want the shim's -31000 answer under the handshake %s", init.Error, init.Attrs, init.Parent, hs.ID)
	}
	if _, ok := got["discovery"]; ok {
		t.Errorf("spans %v: a run that never shook hands has no discovery", names(r.Spans()))
	}
}

func TestTraceparentJoinsAgentTrace(t *testing.T) {
	r := newHTTPReceiver(t)
	s := newScript("rates")
	run := "run_01TRACED"
	const agentTrace, agentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	s.healthy(run, 7, "00-"+agentTrace+"-"+agentSpan+"-01")
	exportFiles(t, r, ProtocolHTTP, []string{s.write(t)}, "")
	got := byName(t, r.Spans())
	call := got["tools/call get_rate"]
	if call.Trace != agentTrace || call.Parent != agentSpan {
		t.Errorf("traced call in trace %s under %s, want the agent's %s under %s", call.Trace, call.Parent, agentTrace, agentSpan)
	}
	root := got["run rates"]
	if len(call.Links) != 1 || call.Links[0].Trace != root.Trace || call.Links[0].Span != root.ID {
		t.Errorf("traced call links %+v, want one link to its run's root %s/%s", call.Links, root.Trace, root.ID)
	}
	if _, ok := call.Attrs["mcpshim.traceparent"]; ok {
		t.Errorf("traced call attrs %v: the traceparent is the parent, not an attribute", call.Attrs)
	}
	if other := got["tools/call convert"]; other.Trace != root.Trace {
		t.Errorf("untraced call in trace %s, want its run's %s", other.Trace, root.Trace)
	}
}

// A session's records through a real Ledger and the live exporter give the
// same spans as a batch export of the file that Ledger wrote.
func TestLiveMatchesBatch(t *testing.T) {
	live, batch := newHTTPReceiver(t), newHTTPReceiver(t)
	live.gzip.Store(true) // the collector decompresses what OTEL_EXPORTER_OTLP_COMPRESSION=gzip sends
	ctx := context.Background()
	getenv := func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}[k] }
	exp, err := NewExporter(ctx, Config{Endpoint: live.URL, NoRetry: true, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(exp, LiveOptions{FlushEvery: 10 * ms})
	path := filepath.Join(t.TempDir(), "rates.jsonl")
	s := newScript("rates")
	lg, err := ledger.Open(ledger.Options{Path: path, Shim: s.shim, Server: s.server, OnRecord: l.OnRecord})
	if err != nil {
		t.Fatal(err)
	}
	s.healthy("run_01A", 1, "")
	s.crashRestart("run_02B", "run_03C")
	s.handshakeTimeout("run_04D")
	for i := range s.recs {
		rec := s.recs[i]
		rec.Seq = 0 // the ledger numbers them
		lg.Write(&rec)
	}
	lg.Close()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Dropped != 0 || st.Failed != 0 || st.Exported == 0 {
		t.Errorf("live stats %+v, want everything exported", st)
	}
	exportFiles(t, batch, ProtocolHTTP, []string{path}, "")
	a, b := live.Spans(), batch.Spans()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("live sent %d spans %v, batch %d %v; want the same", len(a), names(a), len(b), names(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Errorf("span %d: live %+v, batch %+v; want the same", i, a[i], b[i])
		}
	}
}

// A collector that is down or stuck costs the session nothing: OnRecord
// returns at once and what does not fit is dropped and counted.
func TestLiveCollectorDownOrStuck(t *testing.T) {
	ctx := context.Background()
	t.Run("down", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + lis.Addr().String()
		lis.Close() // nothing listens there now
		exp, err := NewExporter(ctx, Config{Endpoint: url, NoRetry: true})
		if err != nil {
			t.Fatal(err)
		}
		l := NewLive(exp, LiveOptions{Queue: 16, FlushEvery: 5 * ms})
		s := newScript("rates")
		s.healthy("run_01DOWN", 1, "")
		for i := range s.recs {
			l.OnRecord(&s.recs[i])
		}
		for l.Stats().Failed == 0 {
			time.Sleep(ms) // until the first export has failed
		}
		// While the collector is given time, records wait in the queue and the
		// rest are dropped: nothing is mapped for a collector that is down.
		for i := 0; i < 100; i++ {
			l.OnRecord(&s.recs[i%len(s.recs)])
		}
		if st := l.Stats(); st.Dropped < 100-16 {
			t.Errorf("dropped %d of 100 records after the collector failed, want all but the queue's 16", st.Dropped)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if st := l.Stats(); st.Failed == 0 || st.Exported != 0 || st.LastError == "" {
			t.Errorf("stats %+v, want failed spans counted with the error", st)
		}
	})
	t.Run("stuck", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release // a collector that accepts and never answers
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		exp, err := NewExporter(ctx, Config{Endpoint: srv.URL, NoRetry: true})
		if err != nil {
			t.Fatal(err)
		}
		l := NewLive(exp, LiveOptions{Queue: 64, BatchSize: 1, FlushEvery: time.Hour})
		s := newScript("rates")
		for i := 0; i < 100; i++ {
			s.healthy(fmt.Sprintf("run_%03d", i), i, "")
		}
		for i := range s.recs {
			l.OnRecord(&s.recs[i]) // returns at once: the queue is full while the export hangs
		}
		st := l.Stats()
		if st.Dropped == 0 || st.Dropped >= uint64(len(s.recs)) {
			t.Errorf("dropped %d of %d records behind a stuck collector, want some dropped, the queue's worth kept", st.Dropped, len(s.recs))
		}
		cctx, cancel := context.WithTimeout(ctx, 50*ms)
		defer cancel()
		if err := l.Close(cctx); err == nil {
			t.Errorf("Close behind a stuck collector returned nil, want its deadline error")
		}
	})
}

// Two exports with one state file send each record's spans once: the second
// sends only what the ledger gained, and a half-written last line waits.
func TestResumableExport(t *testing.T) {
	s := newScript("rates")
	s.healthy("run_01A", 1, "")
	s.crashRestart("run_02B", "run_03C")
	full := s.bytes()
	// Cut inside the crashed run, mid-line: a ledger being written.
	cut := len(full) * 3 / 5
	dir := t.TempDir()
	path, state := filepath.Join(dir, "rates.jsonl"), filepath.Join(dir, "export-state.json")
	if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	first := newHTTPReceiver(t)
	res1 := exportFiles(t, first, ProtocolHTTP, []string{path}, state)
	if res1.Open != 1 {
		t.Errorf("first export left %d runs open, want the one cut short", res1.Open)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(full[cut:])
	f.Close()
	second := newHTTPReceiver(t)
	res2 := exportFiles(t, second, ProtocolHTTP, []string{path}, state)
	third := newHTTPReceiver(t)
	res3 := exportFiles(t, third, ProtocolHTTP, []string{path}, state)

	once := newHTTPReceiver(t)
	exportFiles(t, once, ProtocolHTTP, []string{path}, "")

	if res1.Records+res2.Records != len(s.recs) {
		t.Errorf("records exported %d + %d, want each of %d once", res1.Records, res2.Records, len(s.recs))
	}
	if res3.Records != 0 || len(third.Spans()) != 0 {
		t.Errorf("third export sent %d records, %d spans; want nothing new", res3.Records, len(third.Spans()))
	}
	seen := map[string]gotSpan{}
	for _, sp := range append(first.Spans(), second.Spans()...) {
		if prev, dup := seen[sp.ID]; dup {
			t.Errorf("span %q %s sent twice (first %q)", sp.Name, sp.ID, prev.Name)
		}
		seen[sp.ID] = sp
	}
	want := once.Spans()
	if len(seen) != len(want) {
		t.Errorf("resumed exports sent %d spans, one export %d", len(seen), len(want))
	}
	for _, w := range want {
		g, ok := seen[w.ID]
		if !ok || g.Name != w.Name || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Parent != w.Parent || len(g.Attrs) != len(w.Attrs) {
			t.Errorf("span %q: resumed %+v, one export %+v; want the same", w.Name, g, w)
		}
	}

	// Rotation renames the file: its progress follows it, the new file starts over.
	rotated := ledger.RotatedName(path, time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC))
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	next := newScript("rates")
	next.now = s.now.Add(time.Second)
	next.healthy("run_04D", 9, "")
	if err := os.WriteFile(path, next.bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fourth := newHTTPReceiver(t)
	files, err := ledger.Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	res4 := exportFiles(t, fourth, ProtocolHTTP, files, state)
	if res4.Records != len(next.recs) || res4.Files != 1 {
		t.Errorf("after rotation exported %d records from %d files, want only the new file's %d", res4.Records, res4.Files, len(next.recs))
	}
}

// The live exporter records mcp.server.operation.duration for every request
// the server answered.
func TestLiveOperationDuration(t *testing.T) {
	ctx := context.Background()
	r := newHTTPReceiver(t)
	cfg := Config{Endpoint: r.URL, NoRetry: true}
	mexp, err := NewMetricExporter(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := NewExporter(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(exp, LiveOptions{Metrics: mexp, Resource: NewResource(nil, "rates", "shim_1")})
	s := newScript("rates")
	s.healthy("run_01M", 1, "")
	for i := range s.recs {
		l.OnRecord(&s.recs[i])
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.MetricsError != "" {
		t.Errorf("metrics export: %s", st.MetricsError)
	}
	got := r.Histogram("mcp.server.operation.duration")
	want := map[string]uint64{"initialize": 1, "tools/list": 1, "tools/call": 2}
	if !maps.Equal(got, want) {
		t.Errorf("mcp.server.operation.duration counts by method %v, want %v", got, want)
	}
}

// BenchmarkOnRecord is what the ledger's hook costs the recorder goroutine
// per record while the collector is stuck: a copy onto the queue, or a
// counted drop.
func BenchmarkOnRecord(b *testing.B) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	exp, err := NewExporter(context.Background(), Config{Endpoint: srv.URL, NoRetry: true})
	if err != nil {
		b.Fatal(err)
	}
	l := NewLive(exp, LiveOptions{})
	s := newScript("rates")
	s.healthy("run_01BENCH", 1, "")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.OnRecord(&s.recs[i%len(s.recs)])
	}
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*ms)
	defer cancel()
	l.Close(ctx)
}

// The standard variables reach the request: a signal's own endpoint is used
// as it is, headers are percent-decoded; a 503 is retried (batch export)
// and a 400 is not, with the collector's message in the error.
func TestExporterEnvAndRetry(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	status := []int{http.StatusServiceUnavailable, http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		code := http.StatusBadRequest
		if len(status) > 0 {
			code, status = status[0], status[1:]
		}
		w.WriteHeader(code)
		if code == http.StatusBadRequest {
			w.Write(stringField(nil, 2, "bad span"))
		}
	}))
	defer srv.Close()
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/custom/path",
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:1",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=s%20ecret, x-tenant = a",
	}
	exp, err := NewExporter(context.Background(), Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	span := &Span{Name: "x", SpanContext: rootContext("run_1"), Resource: NewResource(nil, "s", "")}
	if err := exp.ExportSpans(context.Background(), []*Span{span}); err != nil {
		t.Fatalf("export after one 503: %v", err)
	}
	err = exp.ExportSpans(context.Background(), []*Span{span})
	if err == nil || !strings.Contains(err.Error(), "HTTP 400: bad span") {
		t.Errorf("export answered 400: got %v, want an error with HTTP 400: bad span", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("got %d requests, want 3 (a 503 retried once, a 400 not retried)", len(got))
	}
	r := got[0]
	if r.URL.Path != "/custom/path" || r.Header.Get("Api-Key") != "s ecret" || r.Header.Get("X-Tenant") != "a" ||
		r.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("request %s %v: want /custom/path, api-key \"s ecret\", x-tenant a, application/x-protobuf", r.URL.Path, r.Header)
	}
}
