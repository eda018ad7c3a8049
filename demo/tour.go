// Package demo is mcpshim demo's tour: scripted clients talk to the built-in
// fixture servers through mcpshim, one scenario each, over real pipes, and
// the tour reports what every client saw and every ledger recorded.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/safefile"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

const (
	defaultPatience = 30 * time.Second // how long the client waits for an answer a server will give: a loaded machine is slow
	exitGrace       = 30 * time.Second // how long a shim may take to exit once its client left
)

// Width is the longest text line printed, but on a narrower terminal.
const Width = 100

// scenario is one stop of the tour: a fixture behind the shim and the
// client's script against it.
type scenario struct {
	name     string   // the server's label and its ledger file's name
	about    string   // one line for the reader
	fixture  []string // the fixture and its options
	flags    []string // shim flags besides the ones every scenario gets
	patience time.Duration
	want     string // the outcome the tour expects
	script   func(ctx context.Context, dc *client)
}

var never = []string{"--restart", "never"}

// lockFlag stands for the lock file the tour writes in its directory.
const lockFlag = "@lock"

// writeLock writes the tour's tool-surface lock the way a user would: `mcpshim
// lock` against the report server with its token, so the locked-report
// scenario, which runs without it, is caught missing both tools.
func writeLock(ctx context.Context, exe, dir string) (string, error) {
	config := filepath.Join(dir, "demo.mcp.json")
	entry := map[string]any{"mcpServers": map[string]any{"locked-report": map[string]any{
		"command": exe, "args": []string{"fixture", "report"}, "env": map[string]string{"REPORT_API_TOKEN": "demo-token"}}}}
	b, _ := json.Marshal(entry)
	if err := safefile.Write(config, b, 0o600); err != nil {
		return "", err
	}
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	out, err := exec.CommandContext(ctx, exe, "lock", "--config", config, "--out", lock, "--ledger", "off").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mcpshim lock: %v: %s", err, out)
	}
	return lock, nil
}

// The scenarios' scripts: the handshake only; the handshake and tools/list;
// and then tools/call of tool with each args in turn.
func handshake(ctx context.Context, dc *client) { dc.initialize(ctx) }

func listing(ctx context.Context, dc *client) {
	if dc.initialize(ctx) {
		dc.listTools(ctx)
	}
}

func calling(tool string, args ...string) func(context.Context, *client) {
	return func(ctx context.Context, dc *client) {
		if dc.initialize(ctx) && dc.listTools(ctx) {
			for _, a := range args {
				dc.callTool(ctx, tool, a)
			}
		}
	}
}

// scenarios are run in parallel and printed in this order.
var scenarios = []scenario{
	{name: "healthy", about: "a well-behaved server, legacy era: initialize, tools/list, tools/call",
		fixture: []string{"healthy"}, flags: never, want: verdict.Ended,
		script: calling("echo", `{"text":"hello"}`)},
	{name: "modern", about: "the 2026-07-28 era: server/discover and _meta on every request, no initialize",
		fixture: []string{"healthy"}, flags: never, want: verdict.Ended,
		script: func(ctx context.Context, dc *client) {
			if dc.discover(ctx) && dc.listTools(ctx) {
				dc.callTool(ctx, "add", `{"a":2,"b":3}`)
			}
		}},
	{name: "exit-early", about: "the server dies before reading anything (a missing API key)",
		fixture: []string{"exit-early"}, flags: never, want: verdict.Exited,
		script: handshake},
	{name: "banner", about: "a banner on stdout; this client skips it, as Claude Code does: a warning, not a failure",
		fixture: []string{"banner"}, flags: never, want: verdict.Ended,
		script: listing},
	{name: "zero-tools", about: "the handshake succeeds, the tool list is empty",
		fixture: []string{"zero-tools"}, flags: never, want: verdict.Ended,
		script: listing},
	{name: "iserror", about: "a tool fails: a result with isError, not a protocol error",
		fixture: []string{"iserror"}, flags: never, want: verdict.Ended,
		script: calling("fetch", `{"url":"https://api.example.com/report"}`)},
	{name: "silent", about: "the server never answers; the client gives up after 1.5s",
		fixture: []string{"silent"}, flags: append([]string{"--handshake-timeout", "1s"}, never...),
		patience: 1500 * time.Millisecond, want: verdict.Timeout,
		script: handshake},
	{name: "init-no-response", about: "the server reads initialize, logs a fatal error, never answers",
		fixture: []string{"init-no-response"}, flags: append([]string{"--handshake-timeout", "1s"}, never...),
		patience: 1500 * time.Millisecond, want: verdict.Timeout,
		script: handshake},
	{name: "protocol-reject", about: "the server rejects the protocol version",
		fixture: []string{"protocol-reject"}, flags: never, want: verdict.ProtocolError,
		script: handshake},
	{name: "locked-report", about: "no token, zero tools: a lock in enforce mode fails the server",
		fixture: []string{"report"}, flags: append([]string{"--lock", lockFlag, "--lock-mode", "enforce"}, never...),
		want: verdict.Ended, script: listing},
	{name: "crash-mid-response", about: "the server dies halfway through writing a tools/call answer",
		fixture: []string{"crash-mid-response"}, flags: never, want: verdict.Crashed,
		script: calling("echo", `{"text":"hello"}`)},
	{name: "crash-restart", about: "the server dies on call 2; --restart on-failure brings it back for call 3",
		fixture: []string{"healthy", "--crash-on-call", "2"}, flags: []string{"--restart", "on-failure", "--backoff", "100ms"},
		want: verdict.Ended, script: calling("echo", `{"text":"one"}`, `{"text":"two"}`, `{"text":"three"}`)},
}

// Report is what --json prints.
type Report struct {
	Dir       string   `json:"dir"`
	Scenarios []Result `json:"scenarios"`
}

// Result is one scenario as the client saw it and the ledger recorded it.
type Result struct {
	Name       string   `json:"name"`
	About      string   `json:"about"`
	Ledger     string   `json:"ledger"`
	Expected   string   `json:"expected"`
	Outcome    string   `json:"outcome"` // the last run's
	Why        string   `json:"why"`
	ShimStatus int      `json:"shim_status"`
	Client     []string `json:"client"`
	Runs       []Run    `json:"runs"`
	Events     []Event  `json:"events"`
	Error      string   `json:"error,omitempty"` // the scenario could not be run or read
}

// Run is a run as the ledger reader judges it, with its reason and advice.
type Run struct {
	report.Run
	Why string `json:"why"`
}

type Event struct {
	AtMS   float64        `json:"at_ms"` // since the scenario's first record
	Run    int            `json:"run"`   // 1 for the first child, 0 for records of no run
	Phase  string         `json:"phase"`
	Event  string         `json:"event"`
	Fields map[string]any `json:"fields,omitempty"` // the key fields only; the ledger has them all
}

// Count is how many scenarios the tour runs.
func Count() int { return len(scenarios) }

// Tour runs every scenario with its ledger in dir, a few at a time, and
// returns them in the tour's order. exe is mcpshim itself; env is the
// shims' environment (the report server's token is kept out of it).
func Tour(ctx context.Context, exe, dir string, env []string) (Report, error) {
	lock, err := writeLock(ctx, exe, dir)
	if err != nil {
		return Report{}, err
	}
	// The report server's token must not leak in from the user's environment.
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "REPORT_API_TOKEN=") })
	rep := Report{Dir: dir, Scenarios: make([]Result, len(scenarios))}
	// A bounded pool: a dozen shims at once on a loaded machine of 2 cores
	// starve each other past any client's patience.
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(2, runtime.NumCPU()))
	for i, sc := range scenarios {
		for j, f := range sc.flags {
			if f == lockFlag {
				sc.flags = slices.Clone(sc.flags)
				sc.flags[j] = lock
			}
		}
		wg.Go(func() { // exits when its scenario's shim has exited
			slots <- struct{}{}
			defer func() { <-slots }()
			rep.Scenarios[i] = sc.run(ctx, exe, dir, env)
		})
	}
	wg.Wait()
	return rep, nil
}

// Unexpected names the scenarios whose outcome is not the one the tour expects.
func (r *Report) Unexpected() []string {
	var out []string
	for _, s := range r.Scenarios {
		if s.Outcome != s.Expected {
			out = append(out, s.Name)
		}
	}
	return out
}

// run starts the shim in front of the scenario's fixture, runs the client
// script over real pipes, waits for the shim to exit and reads its ledger.
// Whatever happens, the shim is gone when run returns: it is stopped with
// SIGTERM, then SIGKILL, and its guard process takes the server's group down.
func (sc scenario) run(ctx context.Context, exe, dir string, env []string) Result {
	res := Result{Name: sc.name, About: sc.about, Expected: sc.want, Ledger: filepath.Join(dir, sc.name+".jsonl")}
	// A kept --dir may hold an earlier demo's records: read only this run's.
	var offset int64
	if st, err := os.Stat(res.Ledger); err == nil {
		offset = st.Size()
	}
	args := append([]string{"--name", sc.name, "--ledger", dir, "--quiet", "--kill-grace", "500ms"}, sc.flags...)
	args = append(append(args, "--", exe, "fixture"), sc.fixture...)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer // the server's stderr and the shim's own complaints
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if err := cmd.Start(); err != nil {
		res.Error = fmt.Sprintf("start %s: %v", exe, err)
		return res
	}
	patience := sc.patience
	if patience == 0 {
		patience = defaultPatience
	}
	dc := newClient(stdin, stdout, patience)
	sc.script(ctx, dc)
	stdin.Close()
	// The shim closes stdout when it exits; reading to the end first keeps
	// Wait from cutting the pipe while a line is still in it.
	if !dc.drain(ctx, exitGrace) {
		cancel()
	}
	err = cmd.Wait()
	res.ShimStatus = cmd.ProcessState.ExitCode()
	res.Client = dc.notes

	entries, runs, rerr := readLedger(res.Ledger, offset)
	switch {
	case rerr != nil:
		res.Error = fmt.Sprintf("read ledger: %v", rerr)
	case len(entries) == 0:
		res.Error = "the ledger recorded nothing"
	}
	if res.Error != "" {
		if err != nil {
			res.Error += fmt.Sprintf("; shim: %v", err)
		}
		if s := strings.TrimSpace(stderr.String()); s != "" {
			res.Error += "; stderr: " + clip(s, 200)
		}
		return res
	}
	res.summarize(entries, runs)
	return res
}
