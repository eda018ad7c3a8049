//go:build !windows

package interop

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// The verdict table: every scenario a real process (or a real HTTP server
// for --url) behind the built shim, driven by a scripted client; what the
// verdict says of each run is kept in testdata/verdict/golden.txtar, and
// every view is held to it (verdict_views_test.go).

var update = flag.Bool("update", false, "rewrite testdata/verdict/golden.txtar from what the scenarios give")

const goldenFile = "testdata/verdict/golden.txtar"

// verdictScenario is one row of the table.
type verdictScenario struct {
	name, server, client string // the golden's words for what each side does
	needs                string // node, node22, python3, go
	flags                []string
	command              func(t *testing.T) []string // a stdio server
	url                  func(t *testing.T) string   // or a remote one
	script               func(s *shimSession)
	probe                bool // probe the same server too
	// races names wordings that depend on which of two processes was
	// first, each mapped to the one the golden keeps.
	races map[string]string
}

const (
	goldenInitParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}`
	goldenInit       = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + goldenInitParams + `}`
)

func fixtureCmd(args ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return append([]string{bins.shim, "fixture"}, args...) }
}

func shCmd(script string) func(*testing.T) []string {
	return func(*testing.T) []string { return []string{"/bin/sh", "-c", script} }
}

// initRaced: whether the client's initialize reached a server that died at
// once depends on which process ran first.
var initRaced = map[string]string{"before any request reached it": "before answering the handshake", "last event: spawned": "last event: initialize_received"}

var verdictScenarios = []verdictScenario{
	{name: "healthy", server: "fixture healthy", client: "initialize, tools/list, one tools/call, then closes stdin",
		command: fixtureCmd("healthy"), script: fullSession("legacy"), probe: true},
	{name: "modern", server: "fixture healthy, 2026-07-28", client: "server/discover, tools/list, one tools/call (modern era), then closes stdin",
		command: fixtureCmd("healthy"), script: fullSession("modern")},
	{name: "exit-early", server: "fixture exit-early: fatal: missing API key on stderr, exit 1 before reading stdin",
		client: "initialize, waits for the answer", command: fixtureCmd("exit-early"), script: initThenClose, probe: true, races: initRaced},
	{name: "exit-early-client-left", server: "fixture exit-early: fatal: missing API key on stderr, exit 1 before reading stdin",
		client: "initialize and closes stdin at once (issue 22, item 1)", command: fixtureCmd("exit-early"), script: initAndLeave, races: initRaced},
	{name: "slow-fail-client-left", server: "sh: 0.3 s, then fatal: missing API key on stderr, exit 1",
		client: "initialize and closes stdin at once (issue 22, item 1)", command: shCmd("sleep 0.3; echo 'fatal: missing API key' >&2; exit 1"),
		script: initAndLeave},
	{name: "eof-exit-0", server: "fixture silent: reads stdin to EOF, exits 0, never writes",
		client: "initialize and closes stdin at once (issue 22, item 2)", command: fixtureCmd("silent"), script: initAndLeave},
	{name: "silent-client-gave-up", server: "fixture silent: reads stdin to EOF, exits 0, never writes",
		client: "initialize, gives up after 1.5 s", command: fixtureCmd("silent"), script: initAndWait(1500 * time.Millisecond), probe: true},
	{name: "stuck-stopped-by-shim", server: "sh: sleep 3600, never reads stdin", client: "initialize, gives up after 1.5 s (issue 22, item 3)",
		flags: []string{"--kill-grace", "200ms"}, command: shCmd("exec sleep 3600"), script: initAndWait(1500 * time.Millisecond)},
	{name: "stuck-client-left-at-once", server: "sh: sleep 3600, never reads stdin", client: "initialize and closes stdin at once",
		flags: []string{"--kill-grace", "200ms"}, command: shCmd("exec sleep 3600"), script: initAndLeave},
	{name: "init-no-response", server: "fixture init-no-response: reads initialize, logs a fatal_error on stderr, never answers",
		client: "initialize, gives up after 1.5 s; --handshake-timeout 500ms", flags: []string{"--handshake-timeout", "500ms"},
		command: fixtureCmd("init-no-response"), script: initAndWait(1500 * time.Millisecond)},
	{name: "slow-cold-start", server: "fixture slow-init --delay 1500ms: answers the handshake after 1.5 s",
		client: "initialize, waits, tools/list, closes stdin", command: fixtureCmd("slow-init", "--delay", "1500ms"), script: listing},
	{name: "refused", server: "fixture protocol-reject: initialize answers -32602 unsupported protocolVersion",
		client: "initialize, waits for the answer", command: fixtureCmd("protocol-reject"), script: initThenClose, probe: true},
	{name: "modern-refused", server: "fixture healthy --refuse-discover: server/discover answers -32022",
		client: "server/discover only (modern era), waits for the answer", command: fixtureCmd("healthy", "--refuse-discover"), script: discoverThenClose},
	{name: "banner-skipped", server: "fixture banner: a line on stdout before the handshake",
		client: "skips the line (as Claude Code does), tools/list, closes stdin", command: fixtureCmd("banner"), script: skipNoise, probe: true},
	{name: "banner-not-skipped", server: "fixture banner: a line on stdout before the handshake",
		client: "a strict client: leaves at the first line that is not JSON-RPC", command: fixtureCmd("banner"), script: strictClient},
	{name: "banner-diverted", server: "fixture banner, --divert-noise", client: "initialize, tools/list, closes stdin (a strict client)",
		flags: []string{"--divert-noise"}, command: fixtureCmd("banner"), script: listing},
	{name: "zero-tools", server: "fixture zero-tools: tools/list is empty", client: "initialize, tools/list, closes stdin",
		command: fixtureCmd("zero-tools"), script: listing, probe: true},
	{name: "lock-warn", server: "fixture report without its token: no tools; --lock-mode warn",
		client: "initialize, tools/list, closes stdin", flags: []string{"--lock", "@lock", "--lock-mode", "warn"}, command: fixtureCmd("report"), script: listing},
	{name: "lock-enforce", server: "fixture report without its token: no tools; --lock-mode enforce",
		client: "initialize, tools/list, closes stdin", flags: []string{"--lock", "@lock", "--lock-mode", "enforce"}, command: fixtureCmd("report"), script: listing},
	{name: "iserror", server: "fixture iserror: the tool answers isError", client: "initialize, tools/list, tools/call fetch, closes stdin",
		command: fixtureCmd("iserror"), script: callTool("fetch", `{"url":"https://api.example.com/report"}`)},
	{name: "crash-mid-response", server: "fixture crash-mid-response: half an answer to the first tools/call, then exit 1",
		client: "initialize, tools/list, tools/call echo", flags: []string{"--restart", "never"}, command: fixtureCmd("crash-mid-response"),
		script: callTool("echo", `{"text":"hi"}`)},
	{name: "crash-restart-recovers", server: "fixture healthy --crash-on-call 2, --restart on-failure",
		client: "initialize, tools/list, three tools/call", flags: []string{"--backoff", "50ms"}, command: fixtureCmd("healthy", "--crash-on-call", "2"),
		script: callTool("echo", `{"text":"1"}`, `{"text":"2"}`, `{"text":"3"}`)},
	{name: "crash-loop-gives-up", server: "fixture healthy --crash-after-handshake: exit 3 after each handshake, --max-restarts 2",
		client: "initialize, then waits for the shim to give up", flags: []string{"--backoff", "20ms", "--max-restarts", "2"},
		command: fixtureCmd("healthy", "--crash-after-handshake"), script: handshakeThenWait},
	{name: "killed-after-handshake", server: "fixture healthy, SIGKILLed from outside after the handshake",
		client: "initialize, tools/list, then closes stdin once the server is dead", flags: []string{"--restart", "never"},
		command: fixtureCmd("healthy"), script: killServer},
	{name: "quit-while-connected", server: "python3: answers initialize, exits 0 while the client stays", needs: "python3",
		client: "initialize, waits for the shim to end", command: pythonCmd("quit.py"), script: handshakeThenWait},
	{name: "shim-killed", server: "fixture healthy", client: "initialize; then the shim is SIGKILLed",
		command: fixtureCmd("healthy"), script: killShim},
	{name: "node20-crash", server: "node 20: throws Error at start (a missing credential)", needs: "node",
		client: "initialize, waits for the answer", command: nodeCmd(false), script: initThenClose, probe: true, races: initRaced},
	{name: "node22-crash", server: "node 22: throws Error at start (a missing credential)", needs: "node22",
		client: "initialize, waits for the answer", command: nodeCmd(true), script: initThenClose, races: initRaced},
	{name: "python-crash", server: "python3: KeyError at start (a missing credential)", needs: "python3",
		client: "initialize, waits for the answer", command: pythonCmd("crash.py"), script: initThenClose, probe: true, races: initRaced},
	{name: "go-crash", server: "go: panics at start (a nil map)", needs: "go",
		client: "initialize, waits for the answer", command: goCrashCmd, script: initThenClose, races: initRaced},
	{name: "missing-binary", server: "no-such-mcp-server: not on PATH", client: "initialize, waits for the answer",
		command: func(*testing.T) []string { return []string{"no-such-mcp-server"} }, script: initThenClose, probe: true},
	{name: "not-executable", server: "a file without the execute bit", client: "initialize, waits for the answer",
		command: func(t *testing.T) []string { return []string{testdataPath(t, "crash.py")} }, script: initThenClose},
	{name: "remote-healthy", server: "Go SDK Streamable HTTP server", client: "initialize, tools/list, one tools/call, then closes stdin (--url)",
		url: func(t *testing.T) string { return startGoSDKHTTP(t, nil) }, script: remoteSession},
	{name: "remote-401", server: "HTTP 401 with a Bearer challenge to every request", client: "initialize, waits for the answer (--url with its own --header Authorization)",
		flags: []string{"--header", "Authorization: Bearer expired-golden-token"}, url: func(t *testing.T) string { return serveHTTP(t, challenge) }, script: initThenClose, probe: true},
	{name: "remote-oauth-other-resource", server: "HTTP 401 whose resource metadata names another resource", client: "initialize, waits for the answer (--url, signing in)",
		url: func(t *testing.T) string { return serveHTTP(t, otherResource) }, script: initThenClose},
	{name: "remote-redirect", server: "HTTP 307 to another origin for every request", client: "initialize, waits for the answer (--url)",
		url: func(t *testing.T) string { return serveHTTP(t, moved) }, script: initThenClose, probe: true},
	// Seed 004's page comes on the third consecutive failure and is no exit:
	// the client leaves once it is written, long before the fourth attempt
	// (800 ms after the third, ±20%).
	{name: "remote-503-paged", server: "HTTP 503 to every request (down for a deploy)", client: "initialize, leaves after the shim's page (--url)",
		flags: []string{"--backoff", "200ms"}, url: func(t *testing.T) string { return serveHTTP(t, unavailable) },
		script: initThenLeaveAtPage, probe: true},
	{name: "remote-refused", server: "nothing listens on the port", client: "initialize, leaves after the shim's page (--url)",
		flags: []string{"--backoff", "200ms"}, url: closedPort, script: initThenLeaveAtPage, probe: true},
}

func nodeCmd(v22 bool) func(*testing.T) []string {
	return func(t *testing.T) []string {
		node := bins.node
		if v22 {
			var err error
			if node, err = node22(); err != nil {
				t.Fatal(err)
			}
		}
		return []string{node, testdataPath(t, "crash.mjs")}
	}
}

func pythonCmd(file string) func(*testing.T) []string {
	return func(t *testing.T) []string { return []string{bins.python, testdataPath(t, file)} }
}

func goCrashCmd(t *testing.T) []string {
	bin, err := goCrash()
	if err != nil {
		t.Fatal(err)
	}
	return []string{bin}
}

// shimSession is the shim of one scenario and its scripted client.
type shimSession struct {
	t      *testing.T
	ctx    context.Context
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *testfixtures.Client
	ledger string // the run's ledger file
	stdout *bufio.Reader
}

func (s *shimSession) send(line string) {
	if err := s.client.Send(line); err != nil {
		s.t.Logf("send: %v", err) // a shim that already gave up
	}
}

func (s *shimSession) call(id, method, params string) {
	if _, err := s.client.Call(s.ctx, id, method, params); err != nil {
		s.t.Logf("%s: %v", method, err)
	}
}

func (s *shimSession) close() { s.stdin.Close() }

// wait blocks until the shim exits by itself.
func (s *shimSession) wait() {
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-s.ctx.Done():
		s.t.Errorf("the shim did not end in time")
		s.cmd.Process.Kill()
		<-done
	}
}

func fullSession(era string) func(*shimSession) {
	return func(s *shimSession) {
		if _, err := s.client.Handshake(s.ctx, era); err != nil {
			s.t.Fatalf("handshake: %v", err)
		}
		params := ""
		if era == "modern" {
			params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"golden","version":"1"}}}`
		}
		s.call("2", "tools/list", params)
		call := `{"name":"echo","arguments":{"text":"hi"}}`
		if era == "modern" {
			call = `{"name":"echo","arguments":{"text":"hi"},` + params[1:]
		}
		s.call("3", "tools/call", call)
		s.close()
	}
}

func initThenClose(s *shimSession)   { s.call("1", "initialize", goldenInitParams); s.close() }
func initAndLeave(s *shimSession)    { s.send(goldenInit); s.close() }
func initThenWaitEnd(s *shimSession) { s.send(goldenInit); s.wait() }

func initThenLeaveAtPage(s *shimSession) {
	s.send(goldenInit)
	waitEvent(s.t, s.ledger, "outage_paged", time.Minute)
	s.close()
}

func initAndWait(d time.Duration) func(*shimSession) {
	return func(s *shimSession) {
		s.send(goldenInit)
		time.Sleep(d) // the client's patience: the behaviour under test
		s.close()
	}
}

func discoverThenClose(s *shimSession) {
	s.call("1", "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"golden","version":"1"}}}`)
	s.close()
}

func listing(s *shimSession) {
	if _, err := s.client.Handshake(s.ctx, "legacy"); err != nil {
		s.t.Fatalf("handshake: %v", err)
	}
	s.call("2", "tools/list", "")
	s.close()
}

func callTool(tool string, args ...string) func(*shimSession) {
	return func(s *shimSession) {
		if _, err := s.client.Handshake(s.ctx, "legacy"); err != nil {
			s.t.Fatalf("handshake: %v", err)
		}
		s.call("2", "tools/list", "")
		for i, a := range args {
			s.call(fmt.Sprint(10+i), "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, a))
		}
		s.close()
	}
}

func handshakeThenWait(s *shimSession) {
	s.client.Handshake(s.ctx, "legacy")
	s.wait()
}

// skipNoise reads past lines that are not JSON-RPC, as Claude Code does,
// then lists the tools.
func skipNoise(s *shimSession) {
	s.send(goldenInit)
	for {
		line, err := s.client.ReadLine(s.ctx)
		if err != nil {
			s.t.Fatalf("waiting for the initialize answer: %v", err)
		}
		if bytes.Contains(line, []byte(`"id":1`)) {
			break
		}
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", "")
	s.close()
}

// strictClient leaves at the first line that is not JSON-RPC, as a client
// whose parser fails on it does.
func strictClient(s *shimSession) {
	s.send(goldenInit)
	line, err := s.client.ReadLine(s.ctx)
	if err != nil || bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		s.t.Fatalf("the banner server's first line: %q, %v; want its banner", line, err)
	}
	s.close()
}

func killServer(s *shimSession) {
	if _, err := s.client.Handshake(s.ctx, "legacy"); err != nil {
		s.t.Fatalf("handshake: %v", err)
	}
	s.call("2", "tools/list", "")
	spawned := waitEvent(s.t, s.ledger, "spawned", eventWait)
	syscall.Kill(spawned.PID, syscall.SIGKILL)
	waitEvent(s.t, s.ledger, "exited", eventWait)
	s.close()
}

func killShim(s *shimSession) {
	s.send(goldenInit)
	waitEvent(s.t, s.ledger, "initialize_responded", eventWait)
	s.cmd.Process.Kill()
}

func remoteSession(s *shimSession) {
	if _, err := s.client.Handshake(s.ctx, "legacy"); err != nil {
		s.t.Fatalf("handshake: %v", err)
	}
	s.call("2", "tools/list", "")
	s.call("3", "tools/call", `{"name":"echo","arguments":{"message":"hi"}}`)
	s.close()
}

// eventWait bounds a wait for a ledger record on a loaded machine.
const eventWait = 60 * time.Second

// waitEvent polls the ledger at path until a record of event is there.
func waitEvent(t *testing.T, path, event string, timeout time.Duration) ledger.Entry {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range bytes.Split(b, []byte("\n")) {
				if e, err := ledger.Decode(line); err == nil && e.Event == event {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in %s after %v", event, path, timeout)
		}
	}
}

// played is a scenario after its shim ended: where its ledgers are and what
// the shim printed.
type played struct {
	sc       verdictScenario
	dir      string // the shim's ledger directory
	probeDir string // the probe's, when probed
	stderr   string
	probeOut []byte // probe --json
}

// play runs one scenario through the built shim (and the probe), its
// ledgers in base/NAME, which outlives the scenario's subtest.
func play(t *testing.T, sc verdictScenario, lock, base string) *played {
	p := &played{sc: sc, dir: filepath.Join(base, sc.name)}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var target []string
	if sc.url != nil {
		u := sc.url(t)
		target = []string{"--url", u}
		if sc.probe {
			p.probeOut = probeServer(t, p, map[string]any{"type": "http", "url": u})
		}
	} else {
		cmd := sc.command(t)
		target = append([]string{"--"}, cmd...)
		if sc.probe {
			p.probeOut = probeServer(t, p, map[string]any{"command": cmd[0], "args": cmd[1:]})
		}
	}
	flags := make([]string, len(sc.flags))
	for i, f := range sc.flags {
		flags[i] = strings.ReplaceAll(f, "@lock", lock)
	}
	args := append(append([]string{"--name", sc.name, "--ledger", p.dir}, flags...), target...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bins.shim, args...)
	cmd.Env = verdictEnv(t)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &shimSession{t: t, ctx: ctx, cmd: cmd, stdin: stdin, client: testfixtures.NewClient(stdin, stdout),
		ledger: filepath.Join(p.dir, sc.name+".jsonl")}
	sc.script(s)
	s.wait()
	p.stderr = stderr.String()
	return p
}

// verdictEnv is the servers' environment, as small as a GUI client's: a
// PATH to the runtimes and a HOME, no credential they look for.
func verdictEnv(t *testing.T) []string {
	path := []string{"/usr/local/bin", "/usr/bin", "/bin"}
	for _, bin := range []string{bins.node, bins.python} {
		if dir := filepath.Dir(bin); bin != "" && !slices.Contains(path, dir) {
			path = append([]string{dir}, path...)
		}
	}
	return append([]string{"PATH=" + strings.Join(path, ":"), "HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}, testkit.Env()...)
}

// normalize takes out of a verdict's words what changes from run to run:
// durations, pids, ports, temporary paths, and the races a scenario names.
var (
	durationRE = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:µs|ms|s)\b|\b\d+m\d+(?:\.\d+)?s\b|\b\d+h\d+m\d+s\b`)
	pidRE      = regexp.MustCompile(`\bpid \d+`)
	portRE     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	tmpRE      = regexp.MustCompile(`/tmp/[^\s":)]*`)
	// What a machine's cgroups say of a kill from outside: no OOM kill
	// counted in its memory cgroup's file, or why none can be read.
	oomRE = regexp.MustCompile(`its memory cgroup counted no OOM kill meanwhile \([^)]*\)|OOM kills unreadable: [^;\n]*`)
)

// normalizePaths names the checkout (wd, interop/) and the shim before any
// other temporary path: a checkout under /tmp is a temporary path too.
func normalizePaths(s, wd, shim string) string {
	if shim != "" {
		s = strings.ReplaceAll(s, shim, "<mcpshim>")
	}
	if wd != "" {
		s = strings.ReplaceAll(s, wd, "<interop>")
	}
	return tmpRE.ReplaceAllString(s, "<tmp>")
}

func normalize(sc verdictScenario, s string) string {
	s = durationRE.ReplaceAllString(s, "<dur>")
	s = pidRE.ReplaceAllString(s, "pid <pid>")
	s = oomRE.ReplaceAllString(s, "<no OOM kill counted, or unreadable>")
	s = portRE.ReplaceAllString(s, "127.0.0.1:<port>")
	wd, _ := os.Getwd()
	s = normalizePaths(s, wd, bins.shim)
	keys := make([]string, 0, len(sc.races))
	for k := range sc.races {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, sc.races[k])
	}
	return s
}

// TestNormalizePaths: a checkout under /tmp is named <interop>, not <tmp>
// (the golden table failed in every checkout there).
func TestNormalizePaths(t *testing.T) {
	for _, c := range []struct{ in, wd, shim, want string }{
		{"fork/exec /tmp/clone/interop/testdata/verdict/crash.py: permission denied", "/tmp/clone/interop", "/tmp/go-build1/mcpshim",
			"fork/exec <interop>/testdata/verdict/crash.py: permission denied"},
		{"fork/exec /work/m/interop/testdata/x: denied; /tmp/TestX123/ledger", "/work/m/interop", "/tmp/b/mcpshim",
			"fork/exec <interop>/testdata/x: denied; <tmp>"},
		{"/tmp/b/mcpshim -- /tmp/clone/interop/a", "/tmp/clone/interop", "/tmp/b/mcpshim", "<mcpshim> -- <interop>/a"},
	} {
		if got := normalizePaths(c.in, c.wd, c.shim); got != c.want {
			t.Errorf("normalizePaths(%q, wd %q, shim %q) = %q, want %q", c.in, c.wd, c.shim, got, c.want)
		}
	}
}
