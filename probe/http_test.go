package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// httpFixture is a report server over Streamable HTTP: tools only
// for the right bearer token, in either era, replying as JSON or as an event
// stream. It checks what the transport demands of a client.
type httpFixture struct {
	modern bool   // answers server/discover
	legacy bool   // answers initialize, with a session
	sse    bool   // replies as text/event-stream
	token  string // the bearer token that unlocks the tools
	realm  string // non-empty: 401 without the token
	silent bool   // never replies

	mu      sync.Mutex
	deleted []string // session ids ended by DELETE
	problem string   // the first protocol violation seen
}

func (f *httpFixture) violation(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.problem == "" {
		f.problem = fmt.Sprintf(format, args...)
	}
}

const fixtureSession = "sess-1"

func (f *httpFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	authorized := f.token == "" || r.Header.Get("Authorization") == "Bearer "+f.token
	if f.realm != "" && !authorized {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q, error="invalid_token"`, f.realm))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		f.deleted = append(f.deleted, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		return
	}
	if f.silent {
		io.Copy(io.Discard, r.Body) // the server notices the client leaving only once the body is read
		<-r.Context().Done()
		return
	}
	if accept := r.Header.Get("Accept"); !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		f.violation("Accept %q", accept)
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	modernReq := m.Params.Meta[mcp.MetaProtocolVersion] == mcp.ModernVersion
	if modernReq && (r.Header.Get("Mcp-Protocol-Version") != mcp.ModernVersion || r.Header.Get("Mcp-Method") != m.Method) {
		f.violation("%s: modern request with headers %v", m.Method, r.Header)
	}
	if !modernReq && m.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != fixtureSession {
		// How a stateful SDK server refuses a request outside its session.
		f.reply(w, http.StatusBadRequest, m.ID, nil, &rpcError{Code: -32000, Message: "Bad Request: No valid session ID provided"})
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "server/discover":
		if !f.modern {
			f.reply(w, http.StatusBadRequest, m.ID, nil, &rpcError{Code: -32601, Message: "Method not found"})
			return
		}
		f.reply(w, http.StatusOK, m.ID, map[string]any{
			"supportedVersions": []string{mcp.ModernVersion}, "capabilities": map[string]any{"tools": map[string]any{}},
			"_meta": map[string]any{mcp.MetaServerInfo: map[string]any{"name": "report-remote", "version": "2.0.0"}},
		}, nil)
	case "initialize":
		if !f.legacy {
			f.reply(w, http.StatusOK, m.ID, nil, &rpcError{Code: -32601, Message: "Method not found"})
			return
		}
		w.Header().Set("Mcp-Session-Id", fixtureSession)
		f.reply(w, http.StatusOK, m.ID, map[string]any{
			"protocolVersion": mcp.LegacyVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "report-remote", "version": "2.0.0"},
		}, nil)
	case "tools/list":
		tools := []any{}
		if authorized {
			tools = []any{
				map[string]any{"name": "fetch_daily_report", "description": "Fetch the daily sales report", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "list_report_dates", "description": "List available report dates", "inputSchema": map[string]any{"type": "object"}},
			}
		}
		f.reply(w, http.StatusOK, m.ID, map[string]any{"tools": tools}, nil)
	default:
		f.reply(w, http.StatusOK, m.ID, nil, &rpcError{Code: -32601, Message: "Method not found"})
	}
}

func (f *httpFixture) reply(w http.ResponseWriter, status int, id json.RawMessage, result any, rerr *rpcError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	data, _ := json.Marshal(msg)
	if f.sse && status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		// A notification first: the probe must skip to its own response.
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		fmt.Fprintf(w, "id: 1\nevent: message\ndata: %s\n\n", data)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

func serve(t *testing.T, f *httpFixture) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestHTTP(t *testing.T) {
	cases := []struct {
		name     string
		fixture  *httpFixture
		headers  map[string]string
		outcome  Outcome
		protocol string
		tools    []string
		detail   string
	}{
		{"modern JSON", &httpFixture{modern: true, legacy: true}, nil, Ready, mcp.ModernVersion, []string{"fetch_daily_report", "list_report_dates"}, "report-remote 2.0.0"},
		{"modern event stream", &httpFixture{modern: true, sse: true}, nil, Ready, mcp.ModernVersion, []string{"fetch_daily_report", "list_report_dates"}, ""},
		{"legacy session, event stream", &httpFixture{legacy: true, sse: true}, nil, Ready, mcp.LegacyVersion, []string{"fetch_daily_report", "list_report_dates"}, ""},
		{"token present", &httpFixture{modern: true, token: "test-token"}, map[string]string{"Authorization": "Bearer test-token"}, Ready, mcp.ModernVersion, []string{"fetch_daily_report", "list_report_dates"}, ""},
		{"token missing: zero tools, no error", &httpFixture{modern: true, token: "test-token"}, nil, Ready, mcp.ModernVersion, []string{}, ""},
		{"auth required", &httpFixture{modern: true, token: "test-token", realm: "reports"}, nil, AuthRequired, "", []string{}, `HTTP 401 Unauthorized at server/discover; WWW-Authenticate: Bearer realm="reports"`},
		{"modern only server", &httpFixture{modern: true}, nil, Ready, mcp.ModernVersion, []string{"fetch_daily_report", "list_report_dates"}, ""},
		{"legacy only server", &httpFixture{legacy: true}, nil, Ready, mcp.LegacyVersion, []string{"fetch_daily_report", "list_report_dates"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := serve(t, c.fixture)
			r := probeOne(t, Target{Name: "remote", URL: url, Headers: c.headers}, 5*time.Second)
			got := r.ToolNames()
			if r.Outcome != c.outcome || r.Protocol != c.protocol || !slices.Equal(got, c.tools) || !strings.Contains(r.Detail, c.detail) {
				t.Fatalf("probe %s: got %s protocol %q tools %v %q, want %s protocol %q tools %v containing %q",
					c.name, r.Outcome, r.Protocol, got, r.Detail, c.outcome, c.protocol, c.tools, c.detail)
			}
			if r.Transport != "http" {
				t.Errorf("probe %s: got transport %q, want http", c.name, r.Transport)
			}
			if c.fixture.problem != "" {
				t.Errorf("probe %s: the server saw %s", c.name, c.fixture.problem)
			}
		})
	}
}

func TestHTTPLegacySessionIsDeleted(t *testing.T) {
	f := &httpFixture{legacy: true}
	r := probeOne(t, Target{Name: "remote", URL: serve(t, f)}, 5*time.Second)
	if r.Outcome != Ready || !slices.Equal(f.deleted, []string{fixtureSession}) {
		t.Fatalf("legacy probe: got %s and DELETEs %v, want READY and session %s deleted", r.Outcome, f.deleted, fixtureSession)
	}
}

func TestHTTPUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := probeOne(t, Target{Name: "gone", URL: "http://" + addr + "/mcp"}, 2*time.Second)
	if r.Outcome != Unreachable || !strings.Contains(r.Detail, refusedText) {
		t.Fatalf("probe of closed port %s: got %s %q, want UNREACHABLE connection refused", addr, r.Outcome, r.Detail)
	}
}

func TestHTTPSilentTimesOut(t *testing.T) {
	r := probeOne(t, Target{Name: "silent", URL: serve(t, &httpFixture{silent: true})}, time.Second)
	if r.Outcome != Timeout || r.LastEvent != InitializeReceivedNoResponse {
		t.Fatalf("silent HTTP server: got %s %q (last event %q), want TIMEOUT %s", r.Outcome, r.Detail, r.LastEvent, InitializeReceivedNoResponse)
	}
	if r.Elapsed > 3*time.Second {
		t.Errorf("silent HTTP server: gave up after %s, want at its 1s deadline", r.Elapsed)
	}
}

func TestHTTPProtocolErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		detail  string
	}{
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404 Not Found at initialize: is "},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>login</html>")
		}, `unusable handshake answer: reply to initialize has Content-Type "text/html"`},
	}
	for _, c := range cases {
		srv := httptest.NewServer(c.handler)
		r := probeOne(t, Target{Name: c.name, URL: srv.URL}, 2*time.Second)
		srv.Close()
		if r.Outcome != ProtocolError || !strings.HasPrefix(r.Detail, c.detail) {
			t.Errorf("server answering %s: got %s %q, want PROTOCOL_ERROR %q", c.name, r.Outcome, r.Detail, c.detail)
		}
	}
}
