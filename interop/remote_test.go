//go:build !windows

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gomcp "github.com/mark3labs/mcp-go/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// remoteServer is one Streamable HTTP server of the remote matrix; start
// returns its endpoint.
type remoteServer struct {
	name  string
	needs string
	start func(t *testing.T) string
}

var remoteServers = []remoteServer{
	// The TypeScript SDK's server: 2025-11-25, sessions, SSE answers, a GET stream.
	{name: "everything", needs: "node", start: startEverythingHTTP},
	// The Go SDK's: stateful (sessions) and stateless with JSON answers only.
	{name: "gosdk", start: func(t *testing.T) string { return startGoSDKHTTP(t, nil) }},
	{name: "gosdk-stateless-json", start: func(t *testing.T) string {
		return startGoSDKHTTP(t, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	}},
}

// remoteClient connects to endpoint directly over HTTP, or, with shim set,
// through `mcpshim --url endpoint` on stdio, and reports what it saw.
type remoteClient struct {
	name  string
	needs string
	run   func(ctx context.Context, t *testing.T, endpoint string, shim []string) (outcome, error)
}

var remoteClients = []remoteClient{
	{name: "gosdk-legacy", run: goSDKRemote(legacyVersion)},
	{name: "gosdk-modern", run: goSDKRemote("")},
	{name: "mcpgo", run: mcpgoRemote},
	{name: "typescript", needs: "node", run: inspectorRemote},
}

// TestRemote runs each client against each HTTP server twice, directly and
// through the bridge: what the client sees must be equal, and the bridged
// run's ledger must hold the run's handshake and its HTTP exchanges.
func TestRemote(t *testing.T) {
	for _, s := range remoteServers {
		t.Run(s.name, func(t *testing.T) {
			need(t, s.needs)
			endpoint := s.start(t)
			for _, c := range remoteClients {
				t.Run(c.name, func(t *testing.T) {
					need(t, c.needs)
					if s.name == "gosdk" && c.name == "mcpgo" {
						// mcp-go 1.2.1's HTTP client sends 2026-07-28 requests into a
						// 2025-11-25 session of the go-sdk's stateful handler, which
						// refuses them: the pair fails without the shim too.
						t.Skip("mcp-go's HTTP client and the go-sdk's stateful handler disagree on the version, without the shim too")
					}
					ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
					defer cancel()
					want, err := c.run(ctx, t, endpoint, nil)
					if err != nil {
						t.Fatalf("%s -> %s over HTTP: %v", c.name, s.name, err)
					}
					ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
					shim := []string{bins.shim, "--quiet", "--name", s.name, "--ledger", ledger, "--url", endpoint}
					got, err := c.run(ctx, t, endpoint, shim)
					if err != nil {
						t.Fatalf("%s -> mcpshim --url -> %s: %v", c.name, s.name, err)
					}
					if g, w := string(mustJSON(t, got)), string(mustJSON(t, want)); g != w {
						t.Fatalf("through the bridge:\n got %s\nwant %s", g, w)
					}
					recs := readRemoteLedger(t, ledger)
					for _, ev := range []string{"connected", "http_exchange", "tools_list_responded", "disconnected"} {
						if recs[ev] == 0 {
							t.Errorf("the bridged run's ledger has no %s: %v", ev, recs)
						}
					}
				})
			}
		})
	}
}

// readRemoteLedger counts the ledger's events once the shim has ended its run.
func readRemoteLedger(t *testing.T, path string) map[string]int {
	t.Helper()
	for end := time.Now().Add(sessionTimeout); ; time.Sleep(20 * time.Millisecond) {
		counts := map[string]int{}
		data, _ := os.ReadFile(path)
		for _, line := range splitLines(data) {
			var r struct {
				Event string `json:"event"`
			}
			if json.Unmarshal(line, &r) == nil {
				counts[r.Event]++
			}
		}
		if counts["disconnected"] > 0 || time.Now().After(end) {
			return counts
		}
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEverythingHTTP runs server-everything in its streamableHttp mode and
// waits until it accepts connections.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	endpoint, _ := startEverythingOn(t, "streamableHttp", freePort(t))
	return endpoint
}

// startEverythingOn runs server-everything in mode on port and waits until
// it listens; kill stops it for good (SIGKILL), as a deploy does.
func startEverythingOn(t *testing.T, mode string, port int) (endpoint string, kill func()) {
	t.Helper()
	cmd := exec.Command(bins.node, npmServer("server-everything"), mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(kill)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for end := time.Now().Add(sessionTimeout); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("server-everything %s did not listen on %s within %v", mode, addr, sessionTimeout)
		}
	}
	path := "/mcp"
	if mode == "sse" {
		path = "/sse"
	}
	return "http://" + addr + path, kill
}

// TestRemoteEverythingRestart kills server-everything (streamableHttp) and
// starts it again on the same port: it answers the old session with 400
// "Bad Request: No valid session ID provided" (JSON-RPC -32000), not the
// spec's 404. The first call after the restart succeeds through the
// bridge's re-initialization. The 400 is written before any handler runs
// (transports/streamableHttp.ts checks the session first), so the call that
// met it never ran there: re-sending it runs it once.
func TestRemoteEverythingRestart(t *testing.T) {
	need(t, "node")
	port := freePort(t)
	endpoint, kill := startEverythingOn(t, "streamableHttp", port)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := exec.Command(bins.shim, "--quiet", "--name", "everything", "--ledger", ledger, "--url", endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	cs, err := goSDKClient("").Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	call := func(msg string) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		if err == nil && (res.IsError || !strings.Contains(string(mustJSON(t, res)), msg)) {
			err = fmt.Errorf("tool error: %s", mustJSON(t, res))
		}
		return err
	}
	if err := call("before"); err != nil {
		t.Fatalf("echo before the restart: %v", err)
	}
	kill()
	startEverythingOn(t, "streamableHttp", port)
	if err := call("after"); err != nil {
		t.Fatalf("the first call after the restart: %v\nledger:\n%s", err, readRemoteEvents(t, ledger))
	}
	if err := call("later"); err != nil {
		t.Fatalf("echo later: %v", err)
	}
	cs.Close()
	recs := readRemoteLedger(t, ledger)
	if recs["session_reinitialized"] != 1 || recs["reconnects_exhausted"] != 0 {
		t.Errorf("ledger events %v, want one session_reinitialized and no outage", recs)
	}
	if events := readRemoteEvents(t, ledger); !strings.Contains(events, `"rule":"http_400_session_text"`) || !strings.Contains(events, `"status":400`) {
		t.Errorf("the re-initialization does not name the 400 and its rule:\n%s", events)
	}
}

// readRemoteEvents is the ledger's re-initialization records, for messages.
func readRemoteEvents(t *testing.T, path string) string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, line := range splitLines(data) {
		if strings.Contains(string(line), "reinit") || strings.Contains(string(line), "reconnect") {
			out = append(out, string(line))
		}
	}
	return strings.Join(out, "\n")
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

// startGoSDKHTTP serves a go-sdk server over Streamable HTTP from this
// process, on loopback.
func startGoSDKHTTP(t *testing.T, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-http", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

func goSDKRemote(version string) func(context.Context, *testing.T, string, []string) (outcome, error) {
	return func(ctx context.Context, t *testing.T, endpoint string, shim []string) (o outcome, err error) {
		var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: endpoint}
		if shim != nil {
			cmd := exec.Command(shim[0], shim[1:]...)
			cmd.Stderr = os.Stderr
			tr = &mcp.CommandTransport{Command: cmd}
		}
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		cs, err := goSDKClient("").Connect(ctx, tr, opts)
		if err != nil {
			return o, fmt.Errorf("connect: %w", err)
		}
		defer cs.Close()
		o.Protocol = cs.InitializeResult().ProtocolVersion
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return o, fmt.Errorf("tools/list: %w", err)
		}
		for _, tool := range tools.Tools {
			o.Tools = append(o.Tools, tool.Name)
		}
		if o.Listed, err = json.Marshal(tools); err != nil {
			return o, err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echoCall.name, Arguments: echoCall.args})
		if err != nil {
			return o, fmt.Errorf("tools/call: %w", err)
		}
		o.Call, err = json.Marshal(res)
		return o, err
	}
}

func mcpgoRemote(ctx context.Context, t *testing.T, endpoint string, shim []string) (o outcome, err error) {
	var c *gomcp.Client
	if shim != nil {
		c, err = gomcp.NewStdioMCPClient(shim[0], nil, shim[1:]...)
	} else if c, err = gomcp.NewStreamableHttpClient(endpoint); err == nil {
		err = c.Start(ctx)
	}
	if err != nil {
		return o, fmt.Errorf("start: %w", err)
	}
	defer c.Close()
	return mcpgoConverse(ctx, c, echoCall)
}

// inspectorRemote is the TypeScript SDK's client through inspector-cli: its
// StreamableHTTPClientTransport for a URL, its stdio transport for the shim.
// One session lists the tools (inspectorSession), a second calls echo.
func inspectorRemote(ctx context.Context, t *testing.T, endpoint string, shim []string) (o outcome, err error) {
	target := []string{endpoint}
	if shim != nil {
		target = shim
	}
	if o, err = inspectorSession(ctx, target, nil, os.Stderr, serverRun{}); err != nil {
		return o, err
	}
	build := filepath.Join(bins.modules, "@modelcontextprotocol", "inspector-cli", "build")
	// --tool-arg takes every word up to the next option: the target goes first.
	args := append([]string{filepath.Join(build, "index.js"), target[0], "--method", "tools/call", "--tool-name", echoCall.name,
		"--tool-arg", "message=" + echoCall.args["message"].(string), "--"}, target[1:]...)
	cmd := exec.CommandContext(ctx, bins.node, args...)
	cmd.Dir = build
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return o, fmt.Errorf("inspector-cli tools/call: %w", err)
	}
	if !strings.Contains(string(out), echoCall.args["message"].(string)) {
		return o, fmt.Errorf("inspector-cli tools/call printed %q, want the echo", out)
	}
	o.Call = json.RawMessage(out)
	return o, nil
}

// TestRemoteEverythingSSE: server-everything in its sse mode speaks the
// 2024-11-05 HTTP+SSE transport (GET /sse names a POST endpoint). Through
// `mcpshim --url http://…/sse`, with --transport auto (it falls back when
// the POST of initialize gets 404) and with --transport sse, a client lists
// the tools and calls echo; killed and restarted on the same port, the
// server is reconnected to and the next call works.
func TestRemoteEverythingSSE(t *testing.T) {
	need(t, "node")
	for _, transport := range []string{"auto", "sse"} {
		t.Run(transport, func(t *testing.T) {
			port := freePort(t)
			endpoint, kill := startEverythingOn(t, "sse", port)
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			cmd := exec.Command(bins.shim, "--quiet", "--name", "everything-sse", "--ledger", ledger, "--transport", transport, "--url", endpoint)
			cmd.Stderr = os.Stderr
			ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
			defer cancel()
			cs, err := goSDKClient("").Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				t.Fatalf("connect through --transport %s: %v", transport, err)
			}
			defer cs.Close()
			call := func(msg string) error {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
				if err == nil && (res.IsError || !strings.Contains(string(mustJSON(t, res)), msg)) {
					err = fmt.Errorf("tool error: %s", mustJSON(t, res))
				}
				return err
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v", err)
			}
			if err := call("over http+sse"); err != nil {
				t.Fatal(err)
			}
			kill()
			startEverythingOn(t, "sse", port)
			var last error
			for end := time.Now().Add(sessionTimeout); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				// Calls during the outage get an error at once; the bridge
				// reconnects by itself.
				if last = call("after the restart"); last == nil {
					break
				}
			}
			if last != nil {
				t.Fatalf("no call succeeded after the restart: %v", last)
			}
			cs.Close()
			recs := readRemoteLedger(t, ledger)
			if transport == "auto" && recs["transport_fallback"] != 1 {
				t.Errorf("ledger events %v, want one transport_fallback", recs)
			}
			if recs["outage_ended"] < 1 {
				t.Errorf("ledger events %v, want the outage ended", recs)
			}
		})
	}
}

// TestWrapRemoteSSE: a Claude Code entry of type sse (server-everything in
// its sse mode) is rewritten by mcpshim wrap --remote into an entry that
// runs the shim with --transport sse; run as the client would run it, it
// lists the tools and calls echo over the old transport from the start (no
// fallback), and unwrap restores the file byte for byte.
func TestWrapRemoteSSE(t *testing.T) {
	need(t, "node")
	endpoint, _ := startEverythingOn(t, "sse", freePort(t))
	dir := t.TempDir()
	config := filepath.Join(dir, ".mcp.json")
	orig := fmt.Sprintf("{\n  \"mcpServers\": {\n    \"everything\": {\"type\": \"sse\", \"url\": %q}\n  }\n}\n", endpoint)
	if err := os.WriteFile(config, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	ledgers := filepath.Join(dir, "ledgers")
	if out, err := exec.Command(bins.shim, "wrap", "--remote", "--config", config, "--ledger", ledgers).CombinedOutput(); err != nil {
		t.Fatalf("mcpshim wrap --remote: %v\n%s", err, out)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, _ := os.ReadFile(config)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the wrapped config: %v\n%s", err, data)
	}
	e := doc.MCPServers["everything"]
	if i := slices.Index(e.Args, "--transport"); i < 0 || e.Args[i+1] != "sse" {
		t.Fatalf("the wrapped entry's args %q lack --transport sse", e.Args)
	}
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	cs, err := goSDKClient("").Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatalf("connect through the wrapped entry: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "wrapped sse"}})
	if err != nil || res.IsError || !strings.Contains(string(mustJSON(t, res)), "wrapped sse") {
		t.Fatalf("echo through the wrapped entry: %v %s", err, mustJSON(t, res))
	}
	cs.Close()
	ledger, _ := filepath.Glob(filepath.Join(ledgers, "everything*.jsonl"))
	if len(ledger) != 1 {
		t.Fatalf("ledgers %v, want one for everything", ledger)
	}
	if recs := readRemoteLedger(t, ledger[0]); recs["sse_endpoint"] != 1 || recs["transport_fallback"] != 0 {
		t.Errorf("ledger events %v, want the old transport from the start (sse_endpoint, no transport_fallback)", recs)
	}
	if out, err := exec.Command(bins.shim, "unwrap", "--config", config).CombinedOutput(); err != nil {
		t.Fatalf("mcpshim unwrap: %v\n%s", err, out)
	}
	if back, _ := os.ReadFile(config); string(back) != orig {
		t.Errorf("unwrap did not restore the file:\n%s\nwant:\n%s", back, orig)
	}
}
