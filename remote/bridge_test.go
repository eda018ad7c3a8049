package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shim is the built mcpshim binary: the bridge is tested as users run it.
var shim string

// buildFlags are go build's flags for it (race_test.go adds -race).
var buildFlags []string

// serveArg, as the test binary's first argument, makes it an MCP server on
// Streamable HTTP instead of a test run, so that tests can kill it for real:
// `remote.test -remote.serve ADDR COUNTFILE`. Each tool call appends a line
// to COUNTFILE, the count surviving the process.
const serveArg = "-remote.serve"

func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == serveArg {
		os.Exit(serveProcess(os.Args[2], os.Args[3]))
	}
	var err error
	if shim, err = testkit.Build("github.com/mcpshim-dev/mcpshim/cmd/mcpshim", buildFlags...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		testkit.Cleanup()
		os.Exit(1)
	}
	os.Exit(testkit.Main(m))
}

func serveProcess(addr, countFile string) int {
	f, err := os.OpenFile(countFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "remote-test-process", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(f, "echo:%s\n", in.Message)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening") // the parent waits for this line
	return toExit(http.Serve(ln, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
}

func toExit(err error) int {
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// deadline bounds one test's waits: generous, for a busy machine.
const deadline = 60 * time.Second

// counters is the server side's evidence of how often each tool ran.
type counters struct {
	mu  sync.Mutex
	ran map[string]int
}

func (c *counters) add(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ran == nil {
		c.ran = map[string]int{}
	}
	c.ran[name]++
	return c.ran[name]
}

func (c *counters) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran[name]
}

type echoArgs struct {
	Message string `json:"message"`
}

// newServer is a go-sdk server with an echo tool that counts its calls, and
// a wait tool that blocks until release is closed (a call in flight).
func newServer(ran *counters, release <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote-test", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			ran.add("echo:" + in.Message)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Blocks until released."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ran.add("wait")
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
		})
	return s
}

// httpServer serves h on addr ("127.0.0.1:0" for a fresh port) until stop.
type httpServer struct {
	addr string
	srv  *http.Server
}

func serve(t testing.TB, addr string, h http.Handler) *httpServer {
	t.Helper()
	var ln net.Listener
	var err error
	for end := time.Now().Add(deadline); ; {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(end) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the old listener's port is being released
	}
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &httpServer{addr: ln.Addr().String(), srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	t.Cleanup(s.stop)
	return s
}

// stop closes the listener and every connection: the process is gone.
func (s *httpServer) stop() { s.srv.Close() }

func (s *httpServer) url() string { return "http://" + s.addr + "/mcp" }

// shimCommand is the bridge as a client's config would run it.
func shimCommand(t *testing.T, ledger string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(shim, append([]string{"--name", "remote-test", "--ledger", ledger}, args...)...)
	cmd.Stderr = &testkit.Buffer{}
	return cmd
}

func stderrOf(cmd *exec.Cmd) string { return cmd.Stderr.(*testkit.Buffer).String() }

type record map[string]any

func (r record) str(k string) string { s, _ := r[k].(string); return s }

// readLedger reads every record of a ledger file.
func readLedger(t *testing.T, path string) []record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var recs []record
	sc := bufio.NewScanner(bytes.NewReader(data)) // a test reading its own ledger, not the relay
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("ledger line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func events(recs []record, name string) []record {
	var out []record
	for _, r := range recs {
		if r.str("event") == name {
			out = append(out, r)
		}
	}
	return out
}

// waitEvent polls the ledger until n records of event are written.
func waitEvent(t *testing.T, path, event string, n int) []record {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		if got := events(readLedger(t, path), event); len(got) >= n {
			return got
		}
		if time.Now().After(end) {
			t.Fatalf("no %d %s records in the ledger within %v; it holds:\n%s", n, event, deadline, eventList(readLedger(t, path)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRecord polls the ledger until a record matches.
func waitRecord(t *testing.T, path, what string, match func(record) bool) record {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		for _, r := range readLedger(t, path) {
			if match(r) {
				return r
			}
		}
		if time.Now().After(end) {
			t.Fatalf("no record with %s in the ledger within %v; it holds:\n%s", what, deadline, eventList(readLedger(t, path)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func eventList(recs []record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "  %s %s\n", r.str("event"), mustJSON(r))
	}
	return b.String()
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func connect(t *testing.T, ctx context.Context, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "remote-test-client", Version: "1.0.0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func echo(ctx context.Context, cs *mcp.ClientSession, msg string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("tool error: %s", mustJSON(res))
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// session is what a client saw, comparable between a direct and a bridged run.
type session struct {
	Protocol string
	Tools    string
	Call     string
}

func runSession(t *testing.T, tr mcp.Transport, version string) session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs := connect(t, ctx, tr, version)
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	return session{Protocol: cs.InitializeResult().ProtocolVersion, Tools: mustJSON(tools), Call: mustJSON(res)}
}

// TestClientsSeeTheSame runs the go-sdk client in both eras against a
// stateful go-sdk server and a stateless one, directly over HTTP and through
// the bridge: what the client sees must be equal, and the ledger must show
// the handshake and an http_exchange per request.
func TestClientsSeeTheSame(t *testing.T) {
	for _, srv := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{
		{"stateful", nil},
		{"stateless-json", &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		for _, version := range []string{"2025-11-25", ""} {
			era := version
			if era == "" {
				era = "default"
			}
			t.Run(srv.name+"/"+era, func(t *testing.T) {
				t.Parallel()
				var ran counters
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, srv.opts)
				s := serve(t, "127.0.0.1:0", h)
				want := runSession(t, &mcp.StreamableClientTransport{Endpoint: s.url()}, version)
				ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
				cmd := shimCommand(t, ledger, "--url", s.url())
				got := runSession(t, &mcp.CommandTransport{Command: cmd}, version)
				if got != want {
					t.Fatalf("through the bridge:\n got %+v\nwant %+v\nstderr:\n%s", got, want, stderrOf(cmd))
				}
				recs := waitEvent(t, ledger, "disconnected", 1)
				recs = readLedger(t, ledger)
				for _, ev := range []string{"connected", "tool_call_responded", "http_exchange", "disconnected"} {
					if len(events(recs, ev)) == 0 {
						t.Errorf("no %s in the ledger:\n%s", ev, eventList(recs))
					}
				}
				if n := ran.get("echo:hello"); n != 2 {
					t.Errorf("echo ran %d times, want 2 (once direct, once bridged)", n)
				}
			})
		}
	}
}
