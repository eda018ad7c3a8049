package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionForgottenAfterRestart kills the server and starts a new one on
// the same port: it forgets every session and answers the next request with
// 404. The bridge re-initializes once, counts no failure, and the call that
// met the 404 succeeds; the server's counter shows each call ran once.
func TestSessionForgottenAfterRestart(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("client "+cmpVersion(version), func(t *testing.T) {
			t.Parallel()
			var ran counters
			handler := func() http.Handler {
				return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
			}
			s1 := serve(t, "127.0.0.1:0", handler())
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			cmd := shimCommand(t, ledger, "--url", s1.url())
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			cs := connect(t, ctx, &mcp.CommandTransport{Command: cmd}, version)
			defer cs.Close()
			if got, err := echo(ctx, cs, "before"); err != nil || got != "before" {
				t.Fatalf("echo before the restart = %q, %v\nstderr:\n%s", got, err, stderrOf(cmd))
			}
			gets := waitGETStream(t, ledger)
			s1.stop()
			serve(t, s1.addr, handler()) // same port, no sessions
			waitGETAfter(t, ledger, gets)
			if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
				t.Fatalf("echo after the restart = %q, %v; want the call that met the 404 to succeed\nstderr:\n%s\nledger:\n%s",
					got, err, stderrOf(cmd), eventList(readLedger(t, ledger)))
			}
			if got, err := echo(ctx, cs, "later"); err != nil || got != "later" {
				t.Fatalf("echo in the new session = %q, %v", got, err)
			}
			cs.Close()
			waitEvent(t, ledger, "disconnected", 1)
			for _, call := range []string{"echo:before", "echo:after", "echo:later"} {
				if n := ran.get(call); n != 1 {
					t.Errorf("%s ran %d times on the server, want 1", call, n)
				}
			}
			recs := readLedger(t, ledger)
			// The GET stream's retry after the restart meets the 404 first and
			// re-initializes; a call racing it meets the 404 itself and is
			// re-sent. Either way, one re-initialization.
			reinit := events(recs, "session_reinitialized")
			resent := events(recs, "resent_after_reinit")
			if len(reinit) != 1 || len(resent) > 1 {
				t.Fatalf("got %d session_reinitialized and %d resent_after_reinit, want 1 and at most 1\n%s", len(reinit), len(resent), eventList(recs))
			}
			if r := reinit[0]; r["failures"] != 0.0 || r["status"] != 404.0 || r.str("rule") != "http_404" {
				t.Errorf("session_reinitialized = %s, want 0 failures, status 404, rule http_404", mustJSON(r))
			}
			if len(resent) == 1 {
				if r := resent[0]; r["status"] != 404.0 || r.str("tool") != "echo" || !strings.HasPrefix(r.str("old_session"), "sha256:") {
					t.Errorf("resent_after_reinit = %s, want status 404, tool echo and the old session's digest", mustJSON(r))
				}
			}
			if n := len(events(recs, "reconnect_scheduled")); n != 0 {
				t.Errorf("%d reconnect_scheduled after a forgotten session, want none: it is not an outage", n)
			}
			if n := len(events(recs, "tool_call_responded")); n != 3 {
				t.Errorf("%d tool_call_responded, want 3\n%s", n, eventList(recs))
			}
		})
	}
}

// serverProcess starts this test binary as a Streamable HTTP server on addr
// and waits until it listens.
func serverProcess(t *testing.T, addr, countFile string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(deadline); ; time.Sleep(50 * time.Millisecond) {
		cmd := exec.Command(self, "-remote.serve", addr, countFile)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = &testkit.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line == "listening\n" {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			return cmd
		}
		cmd.Wait()
		if time.Now().After(end) { // the killed server's port may take a moment
			t.Fatalf("the server process did not listen on %s: %s", addr, stderrOf(cmd))
		}
	}
}

// TestKillAndRestart kills the server process with SIGKILL and starts a new
// one on the same port: one re-initialization, no failure counted, the call
// that met the 404 succeeds, and each call ran once by the servers' count.
func TestKillAndRestart(t *testing.T) {
	dir := t.TempDir()
	countFile := filepath.Join(dir, "calls")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	first := serverProcess(t, addr, countFile)
	ledger := filepath.Join(dir, "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--url", "http://"+addr+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs := connect(t, ctx, &mcp.CommandTransport{Command: cmd}, "2025-11-25")
	defer cs.Close()
	if got, err := echo(ctx, cs, "before"); err != nil || got != "before" {
		t.Fatalf("echo before the kill = %q, %v", got, err)
	}
	gets := waitGETStream(t, ledger)
	first.Process.Kill()
	first.Wait()
	serverProcess(t, addr, countFile)
	waitGETAfter(t, ledger, gets)
	if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
		t.Fatalf("echo after the restart = %q, %v\nstderr:\n%s", got, err, stderrOf(cmd))
	}
	cs.Close()
	recs := waitEvent(t, ledger, "disconnected", 1)
	recs = readLedger(t, ledger)
	if n, m := len(events(recs, "session_reinitialized")), len(events(recs, "reconnect_scheduled")); n != 1 || m != 0 {
		t.Errorf("%d session_reinitialized and %d reconnect_scheduled, want 1 and 0\n%s", n, m, eventList(recs))
	}
	data, err := os.ReadFile(countFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); got != "echo:before\necho:after\n" {
		t.Errorf("the servers ran %q, want each call once", got)
	}
}

// A restart is over for the bridge once its GET stream broke and it tried
// again (a second later): by then it has seen the old server's connections
// close. A call racing that close would meet a reset instead of the 404, and
// a reset may have run the call, so it is never re-sent.

// waitGETStream waits for the GET stream to open and returns how many GET
// exchanges the ledger holds.
func waitGETStream(t *testing.T, ledger string) int {
	t.Helper()
	waitRecord(t, ledger, "the GET stream open", func(r record) bool { return isGET(r) && r["status"] == 200.0 })
	return countGETs(t, ledger)
}

// waitGETAfter waits for a GET exchange after the first n.
func waitGETAfter(t *testing.T, ledger string, n int) {
	t.Helper()
	for end := time.Now().Add(deadline); countGETs(t, ledger) <= n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the bridge did not try its GET stream again within %v\n%s", deadline, eventList(readLedger(t, ledger)))
		}
	}
}

func isGET(r record) bool { return r.str("event") == "http_exchange" && r.str("http_method") == "GET" }

func countGETs(t *testing.T, ledger string) int {
	n := 0
	for _, r := range readLedger(t, ledger) {
		if isGET(r) {
			n++
		}
	}
	return n
}

func cmpVersion(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// rawClient drives the shim over its pipes line by line, to see exactly
// what it answers and how it exits.
type rawClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
}

func startRaw(t *testing.T, cmd *exec.Cmd, env ...string) *rawClient {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	c := &rawClient{t: t, cmd: cmd, in: in, lines: make(chan map[string]any, 64)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					m = map[string]any{"not_json": string(line)}
				}
				c.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *rawClient) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		c.t.Fatalf("write to the shim: %v", err)
	}
}

// answer reads lines until the answer to id arrives.
func (c *rawClient) answer(id float64) map[string]any {
	c.t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the shim's stdout closed before the answer to %v\nstderr:\n%s", id, stderrOf(c.cmd))
			}
			if m["id"] == id {
				return m
			}
		case <-timeout:
			c.t.Fatalf("no answer to %v within %v\nstderr:\n%s", id, deadline, stderrOf(c.cmd))
		}
	}
}

func (c *rawClient) exitCode() int {
	c.t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			c.t.Fatal(err)
		}
		return 0
	case <-time.After(deadline):
		c.t.Fatalf("the shim did not exit within %v\nstderr:\n%s", deadline, stderrOf(c.cmd))
	}
	return -1
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// TestServerGoneForGood stops the server while a call is in flight: the
// call gets its error at once, then the bridge tries again with the
// policy's delays, pages on the third consecutive failure, and gives up
// once --give-up-after has passed, exit 69.
func TestServerGoneForGood(t *testing.T) {
	var ran counters
	release := make(chan struct{})
	defer close(release)
	s := serve(t, "127.0.0.1:0", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, release) }, nil))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--give-up-after", "3s"))
	c.send(initialize)
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize: %v", a)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	waitEvent(t, ledger, "http_exchange", 3)
	for end := time.Now().Add(deadline); ran.get("wait") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the wait tool never started on the server")
		}
	}
	stopped := time.Now()
	s.stop()
	a := c.answer(2)
	if msg := errorMessage(a); !strings.Contains(msg, "not re-sent") {
		t.Fatalf("the call in flight got %v, want an error saying it is not re-sent", a)
	}
	errAt := time.Now()
	if code := c.exitCode(); code != 69 {
		t.Fatalf("exit code %d, want 69 (EX_UNAVAILABLE)\nstderr:\n%s", code, stderrOf(c.cmd))
	}
	recs := readLedger(t, ledger)
	sched := events(recs, "reconnect_scheduled")
	if len(sched) < 3 {
		t.Fatalf("%d reconnect_scheduled, want at least 3 (500ms, 1s, 2s)\n%s", len(sched), eventList(recs))
	}
	for i, want := range []float64{500, 1000} {
		if d, _ := sched[i]["delay_ms"].(float64); d < want*0.8-1 || d > want*1.2+1 {
			t.Errorf("reconnect %d after %vms, want %vms ±20%%", i+1, d, want)
		}
	}
	if paged := events(recs, "outage_paged"); len(paged) != 1 || paged[0]["failures"] != 3.0 {
		t.Errorf("outage_paged = %v, want one, on the third failure\n%s", paged, eventList(recs))
	}
	if gaveUp := events(recs, "reconnects_exhausted"); len(gaveUp) != 1 {
		t.Errorf("reconnects_exhausted = %v, want one\n%s", gaveUp, eventList(recs))
	}
	if n := ran.get("wait"); n != 1 {
		t.Errorf("the call ran %d times on the server, want 1: never re-sent", n)
	}
	if !strings.Contains(stderrOf(c.cmd), "giving up") {
		t.Errorf("stderr does not say it gave up:\n%s", stderrOf(c.cmd))
	}
	t.Logf("the call in flight was answered %v after the stop", errAt.Sub(stopped))
}

// TestUnauthorized answers 401 with a WWW-Authenticate challenge to a wrong
// token: the client's initialize gets an error naming the challenge, the
// ledger records it, nothing is retried, and the token is nowhere on disk.
// The right token, from the environment through ${VAR}, gets through.
func TestUnauthorized(t *testing.T) {
	var ran counters
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	var posts counters
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.add(r.Method)
		if r.Header.Get("Authorization") != "Bearer right-token-1234" {
			// A careless server echoes the credential it refused: it must not reach the ledger.
			got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.Header().Set("WWW-Authenticate", `Bearer realm="remote-test", error_description="unknown token `+got+`", resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	dir := t.TempDir()
	ledger := filepath.Join(dir, "wrong.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--header", "Authorization: Bearer ${MCP_TOKEN}"), "MCP_TOKEN=wrong-token-5678")
	c.send(initialize)
	a := c.answer(1)
	msg := errorMessage(a)
	if strings.Contains(msg, "wrong-token-5678") {
		t.Errorf("the error to the client repeats the token: %s", msg)
	}
	if !strings.Contains(msg, "WWW-Authenticate") || !strings.Contains(msg, "resource_metadata") || !strings.Contains(msg, "401") {
		t.Fatalf("initialize with a wrong token got %v, want an error with the 401 and its challenge", a)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if a := c.answer(2); errorMessage(a) == "" {
		t.Fatalf("tools/list got %v, want an error", a)
	}
	c.in.Close()
	if code := c.exitCode(); code != 0 {
		t.Errorf("exit code %d after the client left, want 0", code)
	}
	recs := readLedger(t, ledger)
	auth := events(recs, "auth_failed")
	if len(auth) != 2 || auth[0].str("realm") != "remote-test" || !strings.HasSuffix(auth[0].str("resource_metadata"), "/.well-known/oauth-protected-resource") {
		t.Errorf("auth_failed = %v, want two with the realm and resource_metadata\n%s", auth, eventList(recs))
	}
	if n := len(events(recs, "reconnect_scheduled")); n != 0 {
		t.Errorf("%d reconnect_scheduled after a 401, want none", n)
	}
	if n := posts.get("POST"); n != 2 {
		t.Errorf("the server got %d POSTs, want 2: a 401 is not retried", n)
	}
	data, _ := os.ReadFile(ledger)
	if strings.Contains(string(data), "wrong-token-5678") || strings.Contains(stderrOf(c.cmd), "wrong-token-5678") {
		t.Errorf("the token reached the ledger or stderr")
	}

	right := shimCommand(t, filepath.Join(dir, "right.jsonl"), "--url", s.url(), "--header", "Authorization: Bearer ${MCP_TOKEN}")
	right.Env = append(os.Environ(), "MCP_TOKEN=right-token-1234")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs := connect(t, ctx, &mcp.CommandTransport{Command: right}, "")
	defer cs.Close()
	if got, err := echo(ctx, cs, "authorized"); err != nil || got != "authorized" {
		t.Fatalf("echo with the right token = %q, %v", got, err)
	}
}

// TestRedeployedAway: after a redeploy the endpoint answers 404 to
// everything, the re-initialization included. The call that met the first
// 404 gets an error and is not re-sent; the failed re-initializations count,
// and the shim gives up with exit 69 instead of re-initializing forever.
func TestRedeployedAway(t *testing.T) {
	var ran counters
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	var gone atomic.Bool
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() {
			http.NotFound(w, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--give-up-after", "2s"))
	c.send(initialize)
	c.answer(1)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	gone.Store(true)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`)
	if msg := errorMessage(c.answer(2)); msg == "" {
		t.Fatal("the call got no error")
	}
	if code := c.exitCode(); code != 69 {
		t.Fatalf("exit %d, want 69\nstderr:\n%s", code, stderrOf(c.cmd))
	}
	recs := readLedger(t, ledger)
	if n := len(events(recs, "reconnect_scheduled")); n < 2 {
		t.Errorf("%d reconnect_scheduled, want at least 2\n%s", n, eventList(recs))
	}
	if n := len(events(recs, "resent_after_reinit")); n != 0 {
		t.Errorf("%d resent_after_reinit, want none: no session to re-send into", n)
	}
	if n := ran.get("echo:x"); n != 0 {
		t.Errorf("echo ran %d times", n)
	}
}
