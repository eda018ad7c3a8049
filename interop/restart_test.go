//go:build !windows

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// restartTimeout bounds one session of the restart tests, and
// restartCallTimeout one call: a client that hangs fails its sub-test, not
// the suite, and a call after a hung one still reports what the client saw.
const (
	restartTimeout     = 60 * time.Second
	restartCallTimeout = 10 * time.Second
)

// restartBackoff is the shim's --backoff here: a crash loop of three restarts
// waits 0, ~50ms and ~100ms.
const restartBackoff = 50 * time.Millisecond

// restartServer is the shim's --name in these tests, which its errors quote.
const restartServer = "crashy"

// restartSession is one client session, opened by the SDK's own stdio launcher.
type restartSession struct {
	list  func(ctx context.Context) error
	echo  func(ctx context.Context, text string) (string, error) // the text the server echoed
	close func() error                                           // the SDK's close; it reaps the shim
}

// restartClient is one SDK client in one era against the two-era fixture.
type restartClient struct {
	name string
	era  era // legacyEra or modernEra
	open func(ctx context.Context, cmd *exec.Cmd) (*restartSession, error)
}

// restartClients: the Go SDK's default is 2026-07-28 (server/discover, no
// initialize); mcp-go v1.2.1 also tries server/discover first and falls back
// to initialize, so both are forced to 2025-11-25 for the legacy era.
var restartClients = []restartClient{
	{"gosdk-modern", modernEra, restartGoSDK("")},
	{"gosdk-legacy", legacyEra, restartGoSDK(legacyVersion)},
	{"mcpgo-modern", modernEra, restartMCPGo("")},
	{"mcpgo-legacy", legacyEra, restartMCPGo(legacyVersion)},
}

// restartGoSDK connects the official Go SDK client over CommandTransport;
// version "" is its default.
func restartGoSDK(version string) func(context.Context, *exec.Cmd) (*restartSession, error) {
	return func(ctx context.Context, cmd *exec.Cmd) (*restartSession, error) {
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		cs, err := goSDKClient("").Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return &restartSession{
			list: func(ctx context.Context) error {
				_, err := cs.ListTools(ctx, nil)
				return err
			},
			echo: func(ctx context.Context, text string) (string, error) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				if err != nil {
					return "", err
				}
				if len(res.Content) != 1 || res.IsError {
					return "", fmt.Errorf("result %+v: want one text, no error", res)
				}
				tc, ok := res.Content[0].(*mcp.TextContent)
				if !ok {
					return "", fmt.Errorf("content %T: want text", res.Content[0])
				}
				return tc.Text, nil
			},
			close: cs.Close,
		}, nil
	}
}

// restartMCPGo starts mark3labs/mcp-go's stdio client on cmd and initializes
// it; version "" is its default.
func restartMCPGo(version string) func(context.Context, *exec.Cmd) (*restartSession, error) {
	return func(ctx context.Context, cmd *exec.Cmd) (*restartSession, error) {
		c, err := gomcp.NewStdioMCPClientWithOptions(cmd.Path, nil, cmd.Args[1:], transport.WithCommandFunc(
			func(context.Context, string, []string, []string) (*exec.Cmd, error) { return cmd, nil }))
		if err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		_, err = c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
			ProtocolVersion: version,
			ClientInfo:      mcpgo.Implementation{Name: "interop-mcpgo", Version: "1.2.1"},
		}})
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("initialize: %w", err)
		}
		return &restartSession{
			list: func(ctx context.Context) error {
				_, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
				return err
			},
			echo: func(ctx context.Context, text string) (string, error) {
				res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}})
				if err != nil {
					return "", err
				}
				if len(res.Content) != 1 || res.IsError {
					return "", fmt.Errorf("result %+v: want one text, no error", res)
				}
				tc, ok := mcpgo.AsTextContent(res.Content[0])
				if !ok {
					return "", fmt.Errorf("content %T: want text", res.Content[0])
				}
				return tc.Text, nil
			},
			close: c.Close,
		}, nil
	}
}

// restartLog is the shim's stderr, read through a pipe of the test's own: its
// end says the shim and everything that inherited its stderr have exited,
// without reaping the shim behind the SDK's back.
type restartLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	w    *os.File // the test's copy of the write end, closed once the SDK has started the shim
	done chan struct{}
}

// captureRestartLog sets cmd's stderr to a new restartLog.
func captureRestartLog(t *testing.T, cmd *exec.Cmd) *restartLog {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &restartLog{w: w, done: make(chan struct{})}
	cmd.Stderr = w
	go func() {
		defer close(l.done)
		defer r.Close()
		io.Copy(l, r)
	}()
	t.Cleanup(func() { w.Close() })
	return l
}

func (l *restartLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *restartLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// started drops the test's write end; call it once the SDK has started the shim.
func (l *restartLog) started() { l.w.Close() }

// exited waits until the shim's stderr is closed: it and its children are gone.
func (l *restartLog) exited(ctx context.Context) error {
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the shim's stderr is still open: %w", ctx.Err())
	}
}

// restartShim is the shim in front of the healthy fixture with the given
// fixture flags (the fixture runs from the shim's own binary), its ledger in
// dir, behind a tee that records in dir/client.out the bytes the client read.
func restartShim(dir string, shimFlags []string, fixtureFlags ...string) *exec.Cmd {
	shim := slices.Concat([]string{bins.shim, "--name", restartServer, "--ledger", filepath.Join(dir, "ledger.jsonl"),
		"--backoff", restartBackoff.String()}, shimFlags, []string{"--", bins.shim, "fixture", "healthy"}, fixtureFlags)
	argv := teeArgv(filepath.Join(dir, "client"), shim)
	return exec.Command(argv[0], argv[1:]...)
}

// restartReport logs, once t has failed, what tells a shim bug from a
// client's: the ledger's events, the shim's stderr and the last bytes the
// client read.
func restartReport(t *testing.T, dir string, entries []ledger.Entry, log *restartLog) {
	t.Helper()
	if !t.Failed() {
		return
	}
	read, _ := os.ReadFile(filepath.Join(dir, "client.out"))
	t.Logf("events:%s\nshim stderr:\n%s\nlast bytes the client read:\n%s", eventList(entries), log, tail(read, 2<<10))
}

// restartExitStatus is the shim's exit status from an SDK's close error, which is
// the error of its exec.Cmd.Wait.
func restartExitStatus(closeErr error) (int, error) {
	if closeErr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(closeErr, &ee) {
		return ee.ExitCode(), nil
	}
	return -1, closeErr
}

// TestRestartRealClients: each SDK client, in each era, runs one session
// through the shim against a server that dies in the middle of answering its
// second tool call. The second call fails with the shim's error, the third
// succeeds on the same client session, answered by the restarted server; the
// ledger shows both runs, the immediate restart, the replay (the handshake for
// a legacy client, nothing for a modern one) and no call sent twice.
func TestRestartRealClients(t *testing.T) {
	for _, c := range restartClients {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := restartShim(dir, nil, "--crash-on-call", "2")
			log := captureRestartLog(t, cmd)
			ctx, cancel := context.WithTimeout(context.Background(), restartTimeout)
			defer cancel()

			s, err := c.open(ctx, cmd)
			log.started()
			if err != nil {
				t.Fatalf("%s through mcpshim: %v\nshim stderr:\n%s", c.name, err, log)
			}
			// A client lists before it calls; it gives the shim a surface to compare after the restart.
			if err := s.list(ctx); err != nil {
				t.Errorf("tools/list: %v", err)
			}
			echo := func(text string) (string, error) {
				ctx, cancel := context.WithTimeout(ctx, restartCallTimeout)
				defer cancel()
				return s.echo(ctx, text)
			}
			if got, err := echo("first call"); err != nil || got != "first call" {
				t.Errorf("echo(%q): got %q, %v, want %q from the first server", "first call", got, err, "first call")
			}
			dead := fmt.Sprintf("mcpshim: server %s exited with code 1 before answering", restartServer)
			if got, err := echo("second call"); err == nil || !strings.Contains(err.Error(), dead) {
				t.Errorf("echo(%q): got %q, %v, want the shim's error %q", "second call", got, err, dead)
			}
			if got, err := echo("third call"); err != nil || got != "third call" {
				t.Errorf("echo(%q) on the same session: got %q, %v, want %q from the restarted server", "third call", got, err, "third call")
			}
			if status, err := restartExitStatus(s.close()); err != nil || status != 0 {
				t.Errorf("close: got status %d, %v, want 0 (the restarted server's)", status, err)
			}
			if err := log.exited(ctx); err != nil {
				t.Fatal(err)
			}

			entries := readLedger(t, filepath.Join(dir, "ledger.jsonl"))
			if problems := restartProblems(entries, c.era); len(problems) > 0 {
				t.Errorf("%s, %s era: the ledger is wrong:\n  %s", c.name, c.era, strings.Join(problems, "\n  "))
			}
			restartReport(t, dir, entries, log)
		})
	}
}

// restartProblems lists how the ledger of one session with a crash on the
// second of three echo calls breaks what the shim promises.
func restartProblems(entries []ledger.Entry, e era) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	own := restartOwn(entries)
	events := make([]string, len(own))
	for i, en := range own {
		events[i] = en.Event
	}

	order := slices.Concat([]string{phases.SpawnRequested, phases.Spawned}, handshakes[e],
		[]string{phases.ToolsListReceived, phases.ToolsListResponded, phases.ToolCallReceived, phases.ToolCallResponded,
			phases.ToolCallReceived, phases.PendingFailed, phases.Exited, phases.RestartScheduled,
			phases.SpawnRequested, phases.Spawned, phases.HandshakeReplayed, phases.ToolCallReceived, phases.ToolCallResponded,
			phases.ClientDisconnected, phases.Exited})
	if missing := notInOrder(events, order); missing != "" {
		add("no %s in order %v", missing, order)
	}
	for _, ev := range []string{phases.ReplayFailed, phases.RestartsExhausted, phases.ToolsChangedAfterRestart,
		phases.UnknownResponse, phases.LateResponseDropped, phases.MessageRejected, phases.RecordsLost} {
		if n := count(events, ev); n > 0 {
			add("%s: got %d, want none", ev, n)
		}
	}
	done := phases.InitializeResponded
	if e == modernEra {
		done = phases.DiscoverResponded
	}
	if n := count(events, done); n != 1 {
		add("%s: got %d, want 1 (the client's only handshake; a replay is not the client's)", done, n)
	}

	runs := restartRuns(own)
	if len(runs) != 2 {
		add("runs: got %d %v, want 2", len(runs), runs)
		return problems
	}
	exits := restartPick(own, phases.Exited)
	if len(exits) != 2 || exits[0].Run != runs[0] || restartExitCode(exits[0]) != 1 || exits[1].Run != runs[1] || restartExitCode(exits[1]) != 0 {
		add("exited: got %s, want run 1 with exit_code 1, then run 2 with exit_code 0", restartExits(exits))
	}
	if rs := restartPick(own, phases.RestartScheduled); len(rs) != 1 {
		add("restart_scheduled: got %d, want 1", len(rs))
	} else if attempt, _ := rs[0].Int("attempt"); attempt != 1 || !restartDelayOK(rs[0], 1) || rs[0].Str("previous_run") != runs[0] {
		d, _ := rs[0].Float("delay_ms")
		add("restart_scheduled: got attempt=%d delay_ms=%v previous_run=%s, want attempt=1 delay_ms=0 previous_run=%s",
			attempt, d, rs[0].Str("previous_run"), runs[0])
	}
	want := []string{"initialize"}
	if e == modernEra {
		want = []string{} // a 2026-07-28 session has no handshake to give back
	}
	if hr := restartPick(own, phases.HandshakeReplayed); len(hr) != 1 {
		add("handshake_replayed: got %d, want 1", len(hr))
	} else if hr[0].Run != runs[1] || hr[0].Bool("modern") != (e == modernEra) || !slices.Equal(hr[0].Strs("replayed"), want) {
		add("handshake_replayed: got run=%s modern=%v replayed=%q, want run=%s modern=%v replayed=%q",
			hr[0].Run, hr[0].Bool("modern"), hr[0].Strs("replayed"), runs[1], e == modernEra, want)
	}

	// Three distinct calls, each received once: the one that died is never re-sent.
	calls := restartPick(own, phases.ToolCallReceived)
	ids := map[string]int{}
	digests := map[string]bool{}
	for _, c := range calls {
		ids[c.Str("request_id")]++
		digests[c.Str("args_sha256")] = true
	}
	for id, n := range ids {
		if n != 1 {
			add("tool_call_received request_id=%s: got %d, want 1 (never sent twice)", id, n)
		}
	}
	if len(calls) != 3 {
		add("tool_call_received: got %d, want 3 (one per call)", len(calls))
		return problems
	}
	if len(digests) != 3 {
		add("tool_call_received args_sha256: got %d distinct, want 3 (distinct arguments)", len(digests))
	}
	if calls[0].Run != runs[0] || calls[1].Run != runs[0] || calls[2].Run != runs[1] {
		add("tool_call_received runs: got %s %s %s, want %s %s %s", calls[0].Run, calls[1].Run, calls[2].Run, runs[0], runs[0], runs[1])
	}
	died := calls[1].Str("request_id")
	if pf := restartPick(own, phases.PendingFailed); len(pf) != 1 || pf[0].Str("request_id") != died || pf[0].Str("tool") != "echo" || pf[0].Run != runs[0] {
		add("pending_failed: got %s, want one for request_id=%s tool=echo in run 1", restartPending(pf), died)
	}
	for i, c := range []ledger.Entry{calls[0], calls[2]} {
		id := c.Str("request_id")
		ok := false
		for _, r := range restartPick(own, phases.ToolCallResponded) {
			ok = ok || r.Str("request_id") == id && r.Run == c.Run && r.Str("outcome") == "success"
		}
		if !ok {
			add("tool_call_responded: no success for call %d (request_id=%s) in its run", 2*i+1, id)
		}
	}
	for _, r := range restartPick(own, phases.ToolCallResponded) {
		if r.Str("request_id") == died {
			add("tool_call_responded: got an answer to the call that died (request_id=%s, run %s)", died, r.Run)
		}
	}
	return problems
}

// TestRestartCrashLoopRealClients: a legacy-era client's server exits 3 right
// after every handshake, the ones the shim replays included. The shim
// restarts it --max-restarts times, waiting 0, then the backoff doubling
// (within its ±20% jitter), gives up and exits 3 on its own; the client's
// call meanwhile gets the shim's error. There is no modern-era crash loop:
// nothing is replayed to a restarted 2026-07-28 server, so it is never given
// a handshake to die after.
func TestRestartCrashLoopRealClients(t *testing.T) {
	const maxRestarts = 3
	for _, c := range restartClients {
		if c.era != legacyEra {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := restartShim(dir, []string{"--max-restarts", fmt.Sprint(maxRestarts)}, "--crash-after-handshake")
			log := captureRestartLog(t, cmd)
			ctx, cancel := context.WithTimeout(context.Background(), restartTimeout)
			defer cancel()

			s, err := c.open(ctx, cmd)
			log.started()
			if err != nil {
				t.Fatalf("%s through mcpshim: %v\nshim stderr:\n%s", c.name, err, log)
			}
			shimErr := fmt.Sprintf("mcpshim: server %s ", restartServer)
			if got, err := s.echo(ctx, "in the loop"); err == nil || !strings.Contains(err.Error(), shimErr) {
				t.Errorf("echo(%q): got %q, %v, want an error from the shim (%q…)", "in the loop", got, err, shimErr)
			}
			// The shim ends by itself; closing first would end the loop as a client disconnect.
			if err := log.exited(ctx); err != nil {
				s.close()
				t.Fatalf("%v\nshim stderr:\n%s", err, log)
			}
			if status, err := restartExitStatus(s.close()); err != nil || status != 3 {
				t.Errorf("close: got status %d, %v, want 3 (the crashing server's)", status, err)
			}

			entries := readLedger(t, filepath.Join(dir, "ledger.jsonl"))
			if problems := restartLoopProblems(entries, maxRestarts); len(problems) > 0 {
				t.Errorf("%s: the ledger is wrong:\n  %s", c.name, strings.Join(problems, "\n  "))
			}
			restartReport(t, dir, entries, log)
		})
	}
}

// restartLoopProblems lists how the ledger of a server that dies after every
// handshake breaks the restart policy: max restarts, each after its backoff,
// every run replayed and dead with exit code 3, then restarts_exhausted.
func restartLoopProblems(entries []ledger.Entry, maxRestarts int) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	own := restartOwn(entries)

	runs := restartRuns(own)
	if len(runs) != maxRestarts+1 {
		add("runs: got %d, want %d (the first and %d restarts)", len(runs), maxRestarts+1, maxRestarts)
	}
	exits := restartPick(own, phases.Exited)
	for _, x := range exits {
		if restartExitCode(x) != 3 {
			add("exited: got %s, want exit_code 3 for every run", restartExits(exits))
			break
		}
	}
	if len(exits) != len(runs) {
		add("exited: got %d, want one per run (%d)", len(exits), len(runs))
	}
	if hr := restartPick(own, phases.HandshakeReplayed); len(hr) != maxRestarts {
		add("handshake_replayed: got %d, want %d (one per restart)", len(hr), maxRestarts)
	}
	scheduled := restartPick(own, phases.RestartScheduled)
	if len(scheduled) != maxRestarts {
		add("restart_scheduled: got %d, want %d", len(scheduled), maxRestarts)
	}
	spawns := restartPick(own, phases.SpawnRequested)
	for i, rs := range scheduled {
		attempt, _ := rs.Int("attempt")
		d, _ := rs.Float("delay_ms")
		if attempt != int64(i+1) || !restartDelayOK(rs, i+1) {
			lo, hi := restartDelayRange(i + 1)
			add("restart_scheduled %d: got attempt=%d delay_ms=%v, want attempt=%d delay_ms in [%v, %v]", i+1, attempt, d, i+1, lo, hi)
		}
		// The delay was waited: the next run was asked for no sooner (the ledger's clock, not the test's).
		if i+1 < len(spawns) {
			if gap := spawns[i+1].Time.Sub(rs.Time); gap.Seconds()*1000 < d-1 {
				add("restart %d: spawn_requested %v after restart_scheduled, want at least delay_ms=%v", i+1, gap, d)
			}
		}
	}
	ex := restartPick(own, phases.RestartsExhausted)
	if len(ex) != 1 {
		add("restarts_exhausted: got %d, want 1", len(ex))
		return problems
	}
	attempts, _ := ex[0].Int("attempts")
	if attempts != int64(maxRestarts) || restartExitCode(ex[0]) != 3 {
		add("restarts_exhausted: got attempts=%d exit_code=%d, want attempts=%d exit_code=3", attempts, restartExitCode(ex[0]), maxRestarts)
	}
	if len(exits) > 0 && ex[0].Time.Before(exits[len(exits)-1].Time) {
		add("restarts_exhausted before the last run exited")
	}
	ids := map[string]int{}
	for _, c := range restartPick(own, phases.ToolCallReceived) {
		ids[c.Str("request_id")]++
	}
	for id, n := range ids {
		if n > 1 {
			add("tool_call_received request_id=%s: got %d, want at most 1 (never sent twice)", id, n)
		}
	}
	return problems
}

// restartDelayRange is the restart delay the policy allows for an attempt, in ms:
// the first immediate, then restartBackoff doubling, ±20%.
func restartDelayRange(attempt int) (lo, hi float64) {
	if attempt <= 1 {
		return 0, 0
	}
	d := float64(restartBackoff.Milliseconds()) * float64(int(1)<<(attempt-2))
	return 0.8 * d, 1.2 * d
}

func restartDelayOK(rs ledger.Entry, attempt int) bool {
	d, ok := rs.Float("delay_ms")
	lo, hi := restartDelayRange(attempt)
	return ok && d >= lo && d <= hi
}

// restartOwn drops records of origin other than the shim's (server-reported, probes).
func restartOwn(entries []ledger.Entry) []ledger.Entry {
	var own []ledger.Entry
	for _, e := range entries {
		if e.Origin == "" {
			own = append(own, e)
		}
	}
	return own
}

// restartRuns lists the run ids of the spawn_requested records, in order.
func restartRuns(entries []ledger.Entry) []string {
	var runs []string
	for _, e := range restartPick(entries, phases.SpawnRequested) {
		runs = append(runs, e.Run)
	}
	return runs
}

func restartPick(entries []ledger.Entry, event string) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range entries {
		if e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

func restartExitCode(e ledger.Entry) int64 {
	n, ok := e.Int("exit_code")
	if !ok {
		return -1
	}
	return n
}

func restartExits(exits []ledger.Entry) string {
	var b strings.Builder
	for _, x := range exits {
		fmt.Fprintf(&b, "[run=%s exit_code=%d signal=%q]", x.Run, restartExitCode(x), x.Str("signal"))
	}
	return b.String()
}

func restartPending(pf []ledger.Entry) string {
	var b strings.Builder
	for _, p := range pf {
		fmt.Fprintf(&b, "[run=%s request_id=%s tool=%s]", p.Run, p.Str("request_id"), p.Str("tool"))
	}
	return b.String()
}

func TestRestartLedgerCheckers(t *testing.T) {
	t0 := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	ev := func(at time.Duration, run, event string, kv ...any) ledger.Entry {
		f := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			v := kv[i+1]
			switch n := v.(type) {
			case int:
				v = json.Number(fmt.Sprint(n))
			case []string:
				l := []any{}
				for _, s := range n {
					l = append(l, s)
				}
				v = l
			}
			f[kv[i].(string)] = v
		}
		return ledger.Entry{Time: t0.Add(at), Run: run, Event: event, Fields: f}
	}
	crash := func(e era) []ledger.Entry {
		out := []ledger.Entry{ev(0, "r1", phases.SpawnRequested), ev(0, "r1", phases.Spawned)}
		for _, h := range handshakes[e] {
			out = append(out, ev(0, "r1", h))
		}
		replayed := []string{"initialize"}
		if e == modernEra {
			replayed = []string{}
		}
		return append(out,
			ev(0, "r1", phases.ToolsListReceived), ev(0, "r1", phases.ToolsListResponded),
			ev(0, "r1", phases.ToolCallReceived, "request_id", "3", "args_sha256", "a"),
			ev(0, "r1", phases.ToolCallResponded, "request_id", "3", "outcome", "success"),
			ev(0, "r1", phases.ToolCallReceived, "request_id", "4", "args_sha256", "b"),
			ev(0, "r1", phases.PendingFailed, "request_id", "4", "tool", "echo"),
			ev(0, "r1", phases.Exited, "exit_code", 1),
			ev(0, "r1", phases.RestartScheduled, "attempt", 1, "delay_ms", 0, "previous_run", "r1"),
			ev(0, "r2", phases.SpawnRequested), ev(0, "r2", phases.Spawned),
			ev(0, "r2", phases.HandshakeReplayed, "modern", e == modernEra, "replayed", replayed),
			ev(0, "r2", phases.ToolCallReceived, "request_id", "5", "args_sha256", "c"),
			ev(0, "r2", phases.ToolCallResponded, "request_id", "5", "outcome", "success"),
			ev(0, "r2", phases.ClientDisconnected), ev(0, "r2", phases.Exited, "exit_code", 0))
	}
	// loop is a crash loop of 3 restarts; wait is how long each restart really waited.
	loop := func(delays []int, wait func(int) int) []ledger.Entry {
		var out []ledger.Entry
		at := time.Duration(0)
		for i := 0; i <= len(delays); i++ {
			run := fmt.Sprintf("r%d", i+1)
			out = append(out, ev(at, run, phases.SpawnRequested), ev(at, run, phases.Spawned))
			if i > 0 {
				out = append(out, ev(at, run, phases.HandshakeReplayed, "replayed", []string{"initialize"}))
			}
			out = append(out, ev(at, run, phases.Exited, "exit_code", 3))
			if i < len(delays) {
				out = append(out, ev(at, run, phases.RestartScheduled, "attempt", i+1, "delay_ms", delays[i]))
				at += time.Duration(wait(delays[i])) * time.Millisecond
			}
		}
		return append(out, ev(at, "r4", phases.RestartsExhausted, "attempts", len(delays), "exit_code", 3))
	}
	waited := func(d int) int { return d }
	without := func(es []ledger.Entry, event string) []ledger.Entry {
		return slices.DeleteFunc(es, func(e ledger.Entry) bool { return e.Event == event })
	}
	set := func(es []ledger.Entry, event, key string, v any) []ledger.Entry {
		for i := range es {
			if es[i].Event == event {
				es[i].Fields[key] = v
			}
		}
		return es
	}
	resent := func(es []ledger.Entry) []ledger.Entry {
		i := slices.IndexFunc(es, func(e ledger.Entry) bool { return e.Event == phases.HandshakeReplayed })
		return slices.Insert(es, i+1, ev(0, "r2", phases.ToolCallReceived, "request_id", "4", "args_sha256", "b"))
	}
	tests := []struct {
		name    string
		entries []ledger.Entry
		check   func([]ledger.Entry) []string
		clean   bool
	}{
		{"legacy crash", crash(legacyEra), func(es []ledger.Entry) []string { return restartProblems(es, legacyEra) }, true},
		{"modern crash", crash(modernEra), func(es []ledger.Entry) []string { return restartProblems(es, modernEra) }, true},
		{"modern read as legacy", crash(modernEra), func(es []ledger.Entry) []string { return restartProblems(es, legacyEra) }, false},
		{"dead call re-sent", resent(crash(legacyEra)), func(es []ledger.Entry) []string { return restartProblems(es, legacyEra) }, false},
		{"first restart delayed", set(crash(legacyEra), phases.RestartScheduled, "delay_ms", json.Number("50")),
			func(es []ledger.Entry) []string { return restartProblems(es, legacyEra) }, false},
		{"no replay", without(crash(legacyEra), phases.HandshakeReplayed), func(es []ledger.Entry) []string { return restartProblems(es, legacyEra) }, false},
		{"no pending_failed", without(crash(modernEra), phases.PendingFailed), func(es []ledger.Entry) []string { return restartProblems(es, modernEra) }, false},
		{"loop", loop([]int{0, 50, 100}, waited), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, true},
		{"loop with jitter", loop([]int{0, 41, 119}, waited), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, true},
		{"loop without backoff", loop([]int{0, 0, 0}, waited), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, false},
		{"loop not doubling", loop([]int{0, 50, 50}, waited), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, false},
		{"loop delay not waited", loop([]int{0, 50, 100}, func(int) int { return 0 }), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, false},
		{"loop gave up early", loop([]int{0, 50}, waited), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, false},
		{"loop never gave up", without(loop([]int{0, 50, 100}, waited), phases.RestartsExhausted), func(es []ledger.Entry) []string { return restartLoopProblems(es, 3) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.check(tt.entries)
			if clean := len(got) == 0; clean != tt.clean {
				t.Errorf("%s: got problems %q, want clean=%v; events:%s", tt.name, got, tt.clean, eventList(tt.entries))
			}
		})
	}
}
