package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/safefile"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// builtShim is the mcpshim binary, built once per test process (or
// MCPSHIM_TEST_BIN): the tests drive it as a client would, over real pipes.
func builtShim(t testing.TB) string { return testkit.Shim(t) }

// fixtureBin is the binary whose fixture subcommand serves the tests: the
// shim's, built without -race (testkit.Fixture).
func fixtureBin(t testing.TB) string { return testkit.Fixture(t) }

// demoBin runs mcpshim demo: built without -race too, because the tour's
// client gives each scenario a fixed patience counted from its start, and a
// race-built shim and fixture starting on a busy machine used it up (the
// silent scenario left at 666ms, before its handshake timeout).
func demoBin(t testing.TB) string { return testkit.Fixture(t) }

// session is one process (the shim, or a fixture directly) with a scripted client.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	client *testfixtures.Client
	stdin  io.WriteCloser
	out    *hashTee
	stderr *testkit.Buffer
	ledger string
}

// hashTee hashes every byte the client reads.
type hashTee struct {
	r io.Reader
	h io.Writer
	n int64
	s interface{ Sum([]byte) []byte }
}

func newHashTee(r io.Reader) *hashTee {
	h := sha256.New()
	return &hashTee{r: r, h: h, s: h}
}

func (ht *hashTee) Read(p []byte) (int, error) {
	n, err := ht.r.Read(p)
	ht.h.Write(p[:n])
	ht.n += int64(n)
	return n, err
}

func (ht *hashTee) sum() string { return hex.EncodeToString(ht.s.Sum(nil)) }

// start runs argv with a scripted client on its stdio. With shim set, argv
// runs behind mcpshim with a ledger in a temp dir and the given shim flags.
func start(t *testing.T, shim bool, shimFlags []string, argv ...string) *session {
	t.Helper()
	bin := builtShim(t)
	if argv[0] == "fixture" {
		argv = append([]string{fixtureBin(t)}, argv...)
	}
	s := &session{t: t, stderr: &testkit.Buffer{}}
	if shim {
		s.ledger = filepath.Join(t.TempDir(), "ledger.jsonl")
		args := append([]string{"--name", "test", "--ledger", s.ledger}, shimFlags...)
		argv = append(append([]string{bin}, append(args, "--")...), argv...)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stderr = s.stderr
	s.cmd.Env = os.Environ()
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.stdin = stdin
	s.out = newHashTee(stdout)
	s.client = testfixtures.NewClient(stdin, s.out)
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	return s
}

// finish closes the client's stdin and waits for the process, returning its status.
func (s *session) finish() int {
	s.t.Helper()
	s.stdin.Close()
	// Read to EOF through the client, whose goroutine owns the pipe, before Wait closes it.
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	for {
		if _, err := s.client.ReadLine(ctx); err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, testfixtures.ErrServerRequest) {
			break
		}
	}
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatalf("wait: %v", err)
	}
	return 0
}

// readToEOF reads what the shim writes to the client until its stdout ends.
func (s *session) readToEOF() []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	var lines []string
	for {
		l, err := s.client.ReadLine(ctx)
		if len(l) > 0 {
			lines = append(lines, string(l))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			s.t.Fatalf("stdout still open after %v; got %q", eventWait, lines)
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, testfixtures.ErrServerRequest) {
			return lines
		}
	}
}

// call sends a request and returns the line that answers it, passing over
// anything else the server writes (noise, notifications, other ids).
func (s *session) call(id, method, params string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	if err := s.client.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`); err != nil {
		s.t.Fatalf("%s %s: %v", method, id, err)
	}
	for {
		line, err := s.client.ReadLine(ctx)
		if m := mcp.Peek(line); m.IsResponse() && !m.Partial && string(m.RawID) == id {
			return string(line)
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.t.Fatalf("%s %s: %v", method, id, err)
		}
	}
}

func (s *session) entries() []ledger.Entry {
	s.t.Helper()
	data, err := os.ReadFile(s.ledger)
	if err != nil {
		s.t.Fatalf("read ledger: %v", err)
	}
	var out []ledger.Entry
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := ledger.Decode(line)
		if err != nil {
			s.t.Fatalf("ledger line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func events(es []ledger.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Event)
	}
	return out
}

func find(es []ledger.Entry, event string) *ledger.Entry {
	for i := range es {
		if es[i].Event == event {
			return &es[i]
		}
	}
	return nil
}

const initParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shim-test","version":"1"}}`

// legacySession is the script both the direct and the shimmed run follow.
func legacySession(s *session) {
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		s.t.Fatal(err)
	}
	s.call("2", "tools/list", `{}`)
	s.call(`"c-1"`, "tools/call", `{"name":"echo","arguments":{"text":"héllo \u0000"}}`)
	s.call("3", "tools/call", `{"name":"nope","arguments":{}}`)
}

// TestByteExactAgainstDirect runs the same session directly and through the
// shim: the client reads the same bytes, and the ledger has the phases.
func TestByteExactAgainstDirect(t *testing.T) {
	for _, fixture := range []string{"healthy", "banner", "log-on-stdout"} {
		t.Run(fixture, func(t *testing.T) {
			direct := start(t, false, nil, "fixture", fixture)
			legacySession(direct)
			direct.finish()
			shimmed := start(t, true, nil, "fixture", fixture)
			legacySession(shimmed)
			if status := shimmed.finish(); status != 0 {
				t.Fatalf("shim exit status %d, want 0; stderr:\n%s", status, shimmed.stderr)
			}
			if direct.out.sum() != shimmed.out.sum() || direct.out.n != shimmed.out.n {
				t.Fatalf("client read %d bytes sha256 %s through the shim, want %d bytes %s as direct", shimmed.out.n, shimmed.out.sum(), direct.out.n, direct.out.sum())
			}
			es := shimmed.entries()
			for _, want := range []string{"spawn_requested", "spawned", "initialize_received", "initialize_responded",
				"initialized_received", "tools_list_received", "tools_list_responded", "tool_call_received",
				"tool_call_responded", "client_disconnected", "exited"} {
				if find(es, want) == nil {
					t.Errorf("ledger has no %s; events: %v", want, events(es))
				}
			}
			if fixture != "healthy" && find(es, "stdout_noise") == nil {
				t.Errorf("%s: no stdout_noise recorded; events: %v", fixture, events(es))
			}
			if fixture == "healthy" && find(es, "stdout_noise") != nil {
				t.Errorf("healthy: stdout_noise recorded for a clean server")
			}
			exited := find(es, "exited")
			if !exited.Bool("handshake") {
				t.Errorf("exited.handshake = false, want true")
			}
			list := find(es, "tools_list_responded")
			if n, _ := list.Int("tool_count"); n != 2 {
				t.Errorf("tool_count = %d, want 2", n)
			}
			var outcomes []string
			for _, e := range es {
				if e.Event == "tool_call_responded" {
					outcomes = append(outcomes, e.Str("outcome"))
				}
			}
			if strings.Join(outcomes, ",") != "success,rpc_error" {
				t.Errorf("tool call outcomes = %v, want [success rpc_error]", outcomes)
			}
			if err := safefile.CheckPrivate(shimmed.ledger); err != nil {
				t.Errorf("the ledger is not its owner's only (0600 on Unix): %v", err)
			}
		})
	}
}

// TestHugeResponse relays one long line whole and marks the record truncated.
func TestHugeResponse(t *testing.T) {
	size := "5000000"
	if !testing.Short() {
		size = "67108864"
	}
	s := start(t, true, nil, "fixture", "huge-response", "--size", size)
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dump","arguments":{}}}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	line, err := s.client.ReadLine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(line) + 1; got != atoi(t, size) {
		t.Fatalf("response line is %d bytes, want %s", got, size)
	}
	s.finish()
	tr := find(s.entries(), "message_truncated")
	if tr == nil {
		t.Fatal("no message_truncated record")
	}
	if n, _ := tr.Int("bytes"); n != int64(atoi(t, size)) {
		t.Errorf("message_truncated.bytes = %d, want %s", n, size)
	}
	// A tool result is not needed whole: the tap keeps its first MiB.
	if n, _ := tr.Int("observed"); n != 1<<20 {
		t.Errorf("message_truncated.observed = %d, want %d", n, 1<<20)
	}
}

// TestLongToolsListObservedWhole: a tools/list answer over the held MiB is
// still digested whole (up to --max-observe).
func TestLongToolsListObservedWhole(t *testing.T) {
	names := make([]string, 12000)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%05d", i)
	}
	file := filepath.Join(t.TempDir(), "tools")
	os.WriteFile(file, []byte(strings.Join(names, ",")), 0o600)
	s := start(t, true, nil, "fixture", "healthy", "--tools", "@"+file)
	s.call("1", "initialize", initParams)
	if list := s.call("2", "tools/list", `{}`); len(list) <= 1<<20 {
		t.Fatalf("tools/list answer is %d bytes; the test needs one over 1 MiB", len(list))
	}
	s.finish()
	tl := find(s.entries(), "tools_list_responded")
	if n, _ := tl.Int("tool_count"); tl == nil || n != 12000 {
		t.Fatalf("tools_list_responded = %+v, want tool_count 12000", tl)
	}
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestExitEarlyKeepsStatusAndStderr(t *testing.T) {
	s := start(t, true, nil, "fixture", "exit-early")
	waitEvent(t, s.ledger, "restarts_exhausted", eventWait) // it died before the client left
	if got := s.finish(); got != 1 {
		t.Fatalf("exit status %d, want 1", got)
	}
	ex := find(s.entries(), "exited")
	if ex == nil || strings.Join(ex.Strs("stderr_tail"), "|") != "fatal: missing API key" || ex.Bool("handshake") {
		t.Fatalf("exited = %+v, want stderr tail [fatal: missing API key] and no handshake", ex)
	}
	if !strings.Contains(s.stderr.String(), "fatal: missing API key\n") {
		t.Errorf("the server's stderr line did not reach the client's log:\n%s", s.stderr)
	}
	if rx := find(s.entries(), "restarts_exhausted"); rx == nil {
		t.Errorf("no restarts_exhausted for a server that died before its first handshake")
	}
}

// TestCrashAnswersPendingAndDropsTornLine: a child dying mid-response leaves
// half a message. The shim holds it back — a client reading with a streaming
// JSON decoder (the Go SDK) could never recover from it — records that, and
// answers the request itself at once.
func TestCrashAnswersPendingAndDropsTornLine(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "fixture", "crash-mid-response")
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	var lines []string
	for {
		l, err := s.client.ReadLine(ctx)
		if len(l) > 0 {
			lines = append(lines, string(l))
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
			break
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":7,"error":{"code":-31000`) {
		t.Fatalf("got lines %q, want only the shim's error for id 7", lines)
	}
	if got := s.finish(); got != 1 {
		t.Errorf("exit status %d, want 1 (the child's)", got)
	}
	es := s.entries()
	for _, want := range []string{"partial_line_dropped", "pending_failed", "exited"} {
		if find(es, want) == nil {
			t.Errorf("no %s; events %v", want, events(es))
		}
	}
}

// TestRestartReplaysHandshake: the second call dies with the child, the third
// works on the same client session after a restart and a replayed handshake.
func TestRestartReplaysHandshake(t *testing.T) {
	s := start(t, true, []string{"--backoff", "50ms"}, "fixture", "healthy", "--crash-on-call", "2")
	legacy := s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", `{}`)
	s.call(`"lvl"`, "logging/setLevel", `{"level":"debug"}`)
	s.call(`"sub"`, "resources/subscribe", `{"uri":"file:///tmp/x"}`)
	if r := s.call("3", "tools/call", `{"name":"echo","arguments":{"text":"one"}}`); !strings.Contains(r, `"one"`) {
		t.Fatalf("call 1 = %s", r)
	}
	if r := s.call("4", "tools/call", `{"name":"echo","arguments":{"text":"two"}}`); !strings.Contains(r, `"code":-31000`) {
		t.Fatalf("call 2 = %s, want the shim's -31000 error", r)
	}
	if r := s.call("5", "tools/call", `{"name":"echo","arguments":{"text":"three"}}`); !strings.Contains(r, `"three"`) {
		t.Fatalf("call 3 = %s, want an answer from the restarted server", r)
	}
	_ = legacy
	s.finish()
	es := s.entries()
	runs := map[string]bool{}
	for _, e := range es {
		runs[e.Run] = true
	}
	if len(runs) != 2 {
		t.Errorf("got %d runs, want 2", len(runs))
	}
	for _, want := range []string{"restart_scheduled", "handshake_replayed", "pending_failed"} {
		if find(es, want) == nil {
			t.Errorf("no %s; events %v", want, events(es))
		}
	}
	if hr := find(es, "handshake_replayed"); hr == nil || fmt.Sprint(hr.Strs("replayed")) != "[initialize logging/setLevel resources/subscribe]" {
		t.Errorf("handshake_replayed = %+v, want initialize, logging/setLevel and resources/subscribe replayed", hr)
	}
	calls := 0
	for _, e := range es {
		if e.Event == "tool_call_received" && e.Str("request_id") == "4" {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("tool call 4 was sent %d times, want exactly 1", calls)
	}
}

// TestCrashLoopGivesUp: a server that dies right after every handshake is
// restarted up to the cap, then the shim exits with its status.
func TestCrashLoopGivesUp(t *testing.T) {
	s := start(t, true, []string{"--backoff", "20ms", "--max-restarts", "3"}, "fixture", "healthy", "--crash-after-handshake")
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	done := make(chan int, 1)
	go func() {
		err := s.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
		}
		done <- 0
	}()
	select {
	case got := <-done:
		if got != 3 {
			t.Fatalf("exit status %d, want 3 (the child's)", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the shim did not give up")
	}
	es := s.entries()
	if rx := find(es, "restarts_exhausted"); rx == nil {
		t.Fatalf("no restarts_exhausted; events %v", events(es))
	}
	n := 0
	for _, e := range es {
		if e.Event == "restart_scheduled" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d restarts, want 3", n)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	s := start(t, true, []string{"--handshake-timeout", "200ms"}, "fixture", "silent")
	waitEvent(t, s.ledger, "handshake_timeout", eventWait)
	s.finish()
	ht := find(s.entries(), "handshake_timeout")
	if ht == nil || ht.Str("last_event") != "spawned_no_initialize" {
		t.Fatalf("handshake_timeout = %+v, want last_event spawned_no_initialize", ht)
	}
}

func processGone(pid int) bool { return !proc.Alive(pid) }

// TestShutdownLadder: a server that ignores stdin EOF and SIGTERM is killed
// after the grace steps, and nothing of its group is left. On Windows the
// steps are CTRL_BREAK_EVENT, which needs a console, and the end of the job.
func TestShutdownLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time shutdown ladder")
	}
	s := start(t, true, []string{"--kill-grace", "300ms"}, "fixture", "stubborn")
	s.call("1", "initialize", initParams)
	begin := time.Now()
	got := s.finish()
	if got != killedStatus {
		t.Errorf("exit status %d, want %d (killed)", got, killedStatus)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	es := s.entries()
	var sigs []string
	for _, e := range es {
		if e.Event == "kill_requested" {
			sigs = append(sigs, e.Str("signal"))
		}
	}
	if strings.Join(sigs, ",") != ladderSteps() {
		t.Errorf("kill_requested signals %v, want %s", sigs, ladderSteps())
	}
	if pid := find(es, "spawned"); pid != nil && !processGone(pid.PID) {
		t.Errorf("child %d still running", pid.PID)
	}
}

func TestLedgerUnwritableCarriesOn(t *testing.T) {
	bin := builtShim(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	if os.Geteuid() == 0 || runtime.GOOS == "windows" {
		// root ignores directory permissions, Windows modes: use a path under a regular file instead.
		f := filepath.Join(dir, "file")
		os.Chmod(dir, 0o700)
		os.WriteFile(f, nil, 0o600)
		dir = f
	}
	cmd := exec.Command(bin, "--ledger", filepath.Join(dir, "sub", "l.jsonl"), "--", bin, "fixture", "healthy")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + "}\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `"serverInfo"`) {
		t.Errorf("the session did not carry on: stdout %q", out.String())
	}
	if !strings.Contains(errb.String(), "cannot be opened") {
		t.Errorf("no clear stderr line about the ledger:\n%s", errb.String())
	}
}

// TestUsageErrors: a mistake is one line saying what is wrong and where
// help is; only mcpshim alone, as a person trying it, gets the usage.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x"}, "missing `-- COMMAND`"},
		{[]string{"--capture", "bodies", "--", "true"}, `--capture "bodies": want meta or full (mcpshim --help lists the flags)`},
		{[]string{"--bogus", "--", "true"}, "unknown flag --bogus (mcpshim --help lists the flags)"},
		{[]string{"--nmae", "fs", "--", "true"}, "unknown flag --nmae; did you mean --name? (mcpshim --help lists the flags)"},
		{[]string{"--kill-grace", "abc", "--", "true"}, "--kill-grace abc: want a duration such as 2s, 500ms or 1m30s"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if got := run(context.Background(), tt.args, nil, strings.NewReader(""), io.Discard, &stderr); got != exitUsage {
			t.Errorf("run(%q) = %d, want %d", tt.args, got, exitUsage)
		}
		if !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("run(%q): stderr %q, want one line with %q", tt.args, stderr.String(), tt.want)
		}
	}
	var stderr bytes.Buffer
	if run(context.Background(), nil, nil, strings.NewReader(""), io.Discard, &stderr); !strings.Contains(stderr.String(), "usage: mcpshim") {
		t.Errorf("mcpshim alone: stderr %q, want the usage", stderr.String())
	}
}

// TestDivertNoise: with --divert-noise a banner goes to stderr, the client
// reads only JSON-RPC, and the ledger marks the noise as diverted.
func TestDivertNoise(t *testing.T) {
	s := start(t, true, []string{"--divert-noise"}, "fixture", "banner")
	if r := s.call("1", "initialize", initParams); !strings.HasPrefix(r, `{"jsonrpc":"2.0","id":1,"result"`) {
		t.Fatalf("initialize = %s", r)
	}
	s.finish()
	if !strings.Contains(s.stderr.String(), "Starting Acme MCP server\n") {
		t.Errorf("the banner did not reach stderr:\n%s", s.stderr)
	}
	noise := find(s.entries(), "stdout_noise")
	if noise == nil || !noise.Bool("diverted") {
		t.Errorf("stdout_noise = %+v, want diverted", noise)
	}
}

// TestLogFormatJSON: --log-format json prints the ledger's own lines on
// stderr; --quiet prints none, while the server's stderr still flows.
func TestLogFormatJSON(t *testing.T) {
	s := start(t, true, []string{"--log-format", "json"}, "fixture", "exit-early")
	s.finish()
	var events int
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.HasPrefix(line, "{") {
			if _, err := ledger.Decode([]byte(line)); err != nil {
				t.Errorf("stderr line %q is not a ledger record: %v", line, err)
			}
			events++
		}
	}
	if events == 0 {
		t.Errorf("no JSON events on stderr:\n%s", s.stderr)
	}
	q := start(t, true, []string{"--quiet"}, "fixture", "exit-early")
	q.finish()
	if strings.Contains(q.stderr.String(), "mcpshim[") || !strings.Contains(q.stderr.String(), "fatal: missing API key") {
		t.Errorf("--quiet stderr = %q, want only the server's line (and the shim's give-up line)", q.stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"help"}} {
		var out bytes.Buffer
		if got := run(context.Background(), args, nil, strings.NewReader(""), &out, io.Discard); got != 0 || !strings.Contains(out.String(), "mcpshim") {
			t.Errorf("run(%q) = %d, output %q", args, got, out.String())
		}
	}
}
