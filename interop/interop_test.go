//go:build !windows

package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// sessionTimeout bounds one client session; a hang fails the pair, not the suite.
const sessionTimeout = 60 * time.Second

// TestInterop runs every client against every server, each session twice:
//
//	direct:  client -> tee(direct) -> server
//	shimmed: client -> tee(client) -> mcpshim -> tee(server) -> server
//
// The tee (this test binary, see runTee) records the bytes on both pipes.
// Byte-exactness is judged inside the shimmed session, where it is
// deterministic: what the shim read from the client must be what the server
// read, and what the server wrote must be what the client read (sha256 of
// each whole stream). Comparing the direct run with the shimmed one instead
// would mix in the SDKs' own nondeterminism (concurrent writes, random
// content), so across runs the suite compares what the client saw (its
// results, as its SDK decoded them) and the two streams as multisets of
// lines, which tolerates a different interleaving but not a changed byte.
// The ledger of the shimmed run must show the era's handshake exactly once.
func TestInterop(t *testing.T) {
	for _, c := range clients {
		for _, s := range servers {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				need(t, c.needs)
				need(t, s.needs)
				t.Parallel()
				testPair(t, c, s)
			})
		}
	}
}

func testPair(t *testing.T, c client, s server) {
	dir := t.TempDir()
	run := s.start(t, dir)
	stderrPath := filepath.Join(dir, "stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	session := func(argv []string) (outcome, error) {
		ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
		defer cancel()
		return c.run(ctx, argv, run.env, stderr, run)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		log, _ := os.ReadFile(stderrPath)
		t.Fatalf(format+"\nstderr of the processes:\n%s", append(args, tail(log, 4<<10))...)
	}

	direct := filepath.Join(dir, "direct")
	want, err := session(teeArgv(direct, run.argv))
	if err != nil {
		fail("%s -> %s without the shim: %v", c.name, s.name, err)
	}
	if len(want.Tools) == 0 {
		fail("%s -> %s without the shim: no tools listed", c.name, s.name)
	}
	lpath := filepath.Join(dir, "ledger.jsonl")
	shim := slices.Concat([]string{bins.shim, "--name", s.name, "--ledger", lpath, "--"}, teeArgv(filepath.Join(dir, "server"), run.argv))
	got, err := session(teeArgv(filepath.Join(dir, "client"), shim))
	if err != nil {
		fail("%s -> mcpshim -> %s: %v", c.name, s.name, err)
	}

	if g, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(g, w) {
		t.Errorf("%s -> %s: the client saw a different session through the shim:\ngot  %s\nwant %s", c.name, s.name, g, w)
	}
	rec := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Inside the shimmed session: the relay is byte-exact both ways.
	sameStream(t, "client -> shim vs shim -> server", rec("client.in"), rec("server.in"))
	sameStream(t, "server -> shim vs shim -> client", rec("server.out"), rec("client.out"))
	// Across the two runs: the same messages, maybe interleaved differently.
	sameLines(t, "client -> server, shimmed vs direct", rec("client.in"), rec("direct.in"))
	sameLines(t, "server -> client, shimmed vs direct", rec("server.out"), rec("direct.out"))

	entries := readLedger(t, lpath)
	expect := expectation{era: eraOf(c, s), tools: len(got.Tools)}
	if c.calls {
		expect.call = run.call.name
	}
	if problems := ledgerProblems(entries, expect); len(problems) > 0 {
		t.Errorf("%s -> mcpshim -> %s, %s era: the ledger is wrong:\n  %s\nevents:%s",
			c.name, s.name, expect.era, strings.Join(problems, "\n  "), eventList(entries))
	}
}

// sameStream fails t unless got and want are the same bytes.
func sameStream(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: got sha256 %x (%d bytes), want %x (%d bytes); first difference at byte %d:\ngot  %q\nwant %q",
		what, sha256.Sum256(got), len(got), sha256.Sum256(want), len(want), i, around(got, i), around(want, i))
}

// sameLines fails t unless got and want hold the same lines, in any order.
func sameLines(t *testing.T, what string, got, want []byte) {
	t.Helper()
	g, w := sortedLines(got), sortedLines(want)
	if slices.Equal(g, w) {
		return
	}
	var extra, missing []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			extra = append(extra, l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			missing = append(missing, l)
		}
	}
	t.Errorf("%s: got %d lines, want %d; only in got: %q; only in want: %q", what, len(g), len(w), clip(extra), clip(missing))
}

func sortedLines(b []byte) []string {
	lines := []string{}
	for l := range bytes.Lines(b) {
		lines = append(lines, string(l))
	}
	slices.Sort(lines)
	return lines
}

func clip(lines []string) []string {
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + "…"
		}
	}
	return lines
}

func around(b []byte, i int) []byte {
	return b[max(0, i-60):min(len(b), i+60)]
}

func tail(b []byte, n int) []byte {
	return b[max(0, len(b)-n):]
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShutdownLadder runs a TypeScript server that does not exit at stdin
// EOF: server-everything with simulated logging on keeps a 5s interval timer
// alive. When the Go SDK client closes, the shim must climb its ladder (close
// stdin, 2s, SIGTERM) and end the server inside the client's budget (the
// client's CommandTransport signals the shim only after TerminateDuration),
// leaving nothing of the server's process group behind.
func TestShutdownLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: the shim waits 2s before SIGTERM")
	}
	need(t, "node")
	t.Parallel()
	dir := t.TempDir()
	lpath := filepath.Join(dir, "ledger.jsonl")
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(bins.shim, "--name", "everything", "--ledger", lpath, "--", bins.node, npmServer("server-everything"), "stdio")
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	const budget = 5 * time.Second // the Go SDK's default TerminateDuration
	cs, err := goSDKClient("").Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: budget}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}}); err != nil {
		cs.Close()
		t.Fatalf("tools/call toggle-simulated-logging: %v", err)
	}
	// The shim exits with the status of the server it stopped, so Close may
	// report a failure; what matters is who stopped whom, in the ledger.
	closeErr := cs.Close()

	entries := readLedger(t, lpath)
	var pgid int64
	var sigterm, sigkill, signalled bool
	var exited *ledger.Entry
	for i, e := range entries {
		switch e.Event {
		case phases.Spawned:
			pgid, _ = e.Int("pgid")
		case phases.KillRequested:
			sigterm = sigterm || e.Str("signal") == "SIGTERM"
			sigkill = sigkill || e.Str("signal") == "SIGKILL"
		case phases.SignalReceived:
			signalled = true
		case phases.Exited:
			exited = &entries[i]
		}
	}
	events := eventList(entries)
	if !sigterm || sigkill {
		t.Errorf("kill_requested: got SIGTERM=%v SIGKILL=%v, want SIGTERM only (node dies of SIGTERM); close: %v; events:%s", sigterm, sigkill, closeErr, events)
	}
	if signalled {
		t.Errorf("signal_received: the client had to signal the shim after its %v budget; events:%s", budget, events)
	}
	if exited == nil || exited.Str("signal") != "SIGTERM" || !exited.Bool("requested_by_shim") {
		t.Errorf("exited: got %v, want signal=SIGTERM requested_by_shim=true; events:%s", exited, events)
	}
	if pgid <= 1 {
		t.Fatalf("spawned: got pgid %d, want the server's group; events:%s", pgid, events)
	}
	if err := syscall.Kill(-int(pgid), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(-%d, 0): got %v, want ESRCH: the server's process group outlived the session", pgid, err)
	}
}
