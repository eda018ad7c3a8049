package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

const demoUsage = `usage: mcpshim demo [--dir DIR] [--json]

A scripted client talks to built-in fixture servers through mcpshim, one
scenario each, and the demo prints what every ledger recorded. Nothing to
install; the ledgers stay in DIR (default: a new temp dir) for mcpshim ledger.
It exits 1 when a scenario's outcome is not the one the tour expects.

flags:
`

const (
	demoPatience  = 30 * time.Second // how long the client waits for an answer a server will give: a loaded machine is slow
	demoExitGrace = 30 * time.Second // how long a shim may take to exit once its client left
	demoWidth     = 100              // the longest text line printed, but on a narrower terminal
	demoModern    = "2026-07-28"
)

// demoScenario is one stop of the tour: a fixture behind the shim and the
// client's script against it.
type demoScenario struct {
	name     string   // the server's label and its ledger file's name
	about    string   // one line for the reader
	fixture  []string // the fixture and its options
	flags    []string // shim flags besides the ones every scenario gets
	patience time.Duration
	want     string // the outcome the tour expects
	script   func(ctx context.Context, dc *demoClient)
}

var demoNever = []string{"--restart", "never"}

// demoLockFlag stands for the lock file the tour writes in its directory.
const demoLockFlag = "@lock"

// demoLock writes the tour's tool-surface lock the way a user would: `mcpshim
// lock` against the report server with its token, so the locked-report
// scenario, which runs without it, is caught missing both tools.
func demoLock(ctx context.Context, exe, dir string, env []string) (string, error) {
	config := filepath.Join(dir, "demo.mcp.json")
	entry := map[string]any{"mcpServers": map[string]any{"locked-report": map[string]any{
		"command": exe, "args": []string{"fixture", "report"}, "env": map[string]string{"REPORT_API_TOKEN": "demo-token"}}}}
	b, _ := json.Marshal(entry)
	if err := os.WriteFile(config, b, 0o600); err != nil {
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
func demoHandshake(ctx context.Context, dc *demoClient) { dc.initialize(ctx) }

func demoListing(ctx context.Context, dc *demoClient) {
	if dc.initialize(ctx) {
		dc.listTools(ctx)
	}
}

func demoCall(tool string, args ...string) func(context.Context, *demoClient) {
	return func(ctx context.Context, dc *demoClient) {
		if dc.initialize(ctx) && dc.listTools(ctx) {
			for _, a := range args {
				dc.callTool(ctx, tool, a)
			}
		}
	}
}

// demoScenarios are run in parallel and printed in this order.
var demoScenarios = []demoScenario{
	{name: "healthy", about: "a well-behaved server, legacy era: initialize, tools/list, tools/call",
		fixture: []string{"healthy"}, flags: demoNever, want: verdict.Ended,
		script: demoCall("echo", `{"text":"hello"}`)},
	{name: "modern", about: "the 2026-07-28 era: server/discover and _meta on every request, no initialize",
		fixture: []string{"healthy"}, flags: demoNever, want: verdict.Ended,
		script: func(ctx context.Context, dc *demoClient) {
			if dc.discover(ctx) && dc.listTools(ctx) {
				dc.callTool(ctx, "add", `{"a":2,"b":3}`)
			}
		}},
	{name: "exit-early", about: "the server dies before reading anything (a missing API key)",
		fixture: []string{"exit-early"}, flags: demoNever, want: verdict.Exited,
		script: demoHandshake},
	{name: "banner", about: "a banner on stdout; this client skips it, as Claude Code does: a warning, not a failure",
		fixture: []string{"banner"}, flags: demoNever, want: verdict.Ended,
		script: demoListing},
	{name: "zero-tools", about: "the handshake succeeds, the tool list is empty",
		fixture: []string{"zero-tools"}, flags: demoNever, want: verdict.Ended,
		script: demoListing},
	{name: "iserror", about: "a tool fails: a result with isError, not a protocol error",
		fixture: []string{"iserror"}, flags: demoNever, want: verdict.Ended,
		script: demoCall("fetch", `{"url":"https://api.example.com/report"}`)},
	{name: "silent", about: "the server never answers; the client gives up after 1.5s",
		fixture: []string{"silent"}, flags: append([]string{"--handshake-timeout", "1s"}, demoNever...),
		patience: 1500 * time.Millisecond, want: verdict.Timeout,
		script: demoHandshake},
	{name: "init-no-response", about: "the server reads initialize, logs a fatal error, never answers",
		fixture: []string{"init-no-response"}, flags: append([]string{"--handshake-timeout", "1s"}, demoNever...),
		patience: 1500 * time.Millisecond, want: verdict.Timeout,
		script: demoHandshake},
	{name: "protocol-reject", about: "the server rejects the protocol version",
		fixture: []string{"protocol-reject"}, flags: demoNever, want: verdict.ProtocolError,
		script: demoHandshake},
	{name: "locked-report", about: "no token, zero tools: a lock in enforce mode fails the server",
		fixture: []string{"report"}, flags: append([]string{"--lock", demoLockFlag, "--lock-mode", "enforce"}, demoNever...),
		want: verdict.Ended, script: demoListing},
	{name: "crash-mid-response", about: "the server dies halfway through writing a tools/call answer",
		fixture: []string{"crash-mid-response"}, flags: demoNever, want: verdict.Crashed,
		script: demoCall("echo", `{"text":"hello"}`)},
	{name: "crash-restart", about: "the server dies on call 2; --restart on-failure brings it back for call 3",
		fixture: []string{"healthy", "--crash-on-call", "2"}, flags: []string{"--restart", "on-failure", "--backoff", "100ms"},
		want: verdict.Ended, script: demoCall("echo", `{"text":"one"}`, `{"text":"two"}`, `{"text":"three"}`)},
}

// demoReport is what --json prints.
type demoReport struct {
	Dir       string       `json:"dir"`
	Scenarios []demoResult `json:"scenarios"`
}

// demoResult is one scenario as the client saw it and the ledger recorded it.
type demoResult struct {
	Name       string      `json:"name"`
	About      string      `json:"about"`
	Ledger     string      `json:"ledger"`
	Expected   string      `json:"expected"`
	Outcome    string      `json:"outcome"` // the last run's
	Why        string      `json:"why"`
	ShimStatus int         `json:"shim_status"`
	Client     []string    `json:"client"`
	Runs       []demoRun   `json:"runs"`
	Events     []demoEvent `json:"events"`
	Error      string      `json:"error,omitempty"` // the scenario could not be run or read
}

// demoRun is a run as the ledger reader judges it, with its reason and advice.
type demoRun struct {
	report.Run
	Why string `json:"why"`
}

type demoEvent struct {
	AtMS   float64        `json:"at_ms"` // since the scenario's first record
	Run    int            `json:"run"`   // 1 for the first child, 0 for records of no run
	Phase  string         `json:"phase"`
	Event  string         `json:"event"`
	Fields map[string]any `json:"fields,omitempty"` // the key fields only; the ledger has them all
}

func runDemo(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	dir := fs.String("dir", "", "keep the ledgers in `DIR` (default: a new temp dir)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if code := parseFlags(c, fs, demoUsage, args); code >= 0 {
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: find own executable: %v\n", err)
		return 1
	}
	if *dir == "" {
		*dir, err = os.MkdirTemp("", "mcpshim-demo-")
	} else {
		err = os.MkdirAll(*dir, 0o700)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: ledger dir: %v\n", err)
		return 1
	}
	if abs, err := filepath.Abs(*dir); err == nil {
		*dir = abs
	}

	width := demoWidth
	if cols := terminalWidth(c, c.stdout); cols > 0 && cols < width {
		width = cols
	}
	if !*asJSON {
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("mcpshim demo: %d scenarios, each a scripted client talking to a fixture server through mcpshim", len(demoScenarios)))
	}
	start := time.Now()
	lock, err := demoLock(ctx, exe, *dir, c.env)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: %v\n", err)
		return 1
	}
	// The report server's token must not leak in from the user's environment.
	env := slices.DeleteFunc(slices.Clone(c.env), func(kv string) bool { return strings.HasPrefix(kv, "REPORT_API_TOKEN=") })
	report := demoReport{Dir: *dir, Scenarios: make([]demoResult, len(demoScenarios))}
	// A bounded pool: a dozen shims at once on a loaded machine of 2 cores
	// starve each other past any client's patience.
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(2, runtime.NumCPU()))
	for i, sc := range demoScenarios {
		for j, f := range sc.flags {
			if f == demoLockFlag {
				sc.flags = slices.Clone(sc.flags)
				sc.flags[j] = lock
			}
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			report.Scenarios[i] = sc.run(ctx, exe, *dir, env)
		})
	}
	wg.Wait()

	var unexpected []string
	for _, r := range report.Scenarios {
		if r.Outcome != r.Expected {
			unexpected = append(unexpected, r.Name)
		}
	}
	if *asJSON {
		if err := printJSON(c.stdout, report); err != nil {
			fmt.Fprintf(c.stderr, "mcpshim demo: %v\n", err)
			return 1
		}
	} else {
		for _, r := range report.Scenarios {
			r.print(c.stdout, width)
		}
		fmt.Fprintln(c.stdout)
		if len(unexpected) == 0 {
			fmt.Fprintf(c.stdout, "%d scenarios in %.1fs, every outcome as expected.\n", len(demoScenarios), time.Since(start).Seconds())
		} else {
			fmt.Fprintf(c.stdout, "%d scenarios in %.1fs; unexpected outcome: %s\n", len(demoScenarios), time.Since(start).Seconds(), strings.Join(unexpected, ", "))
		}
		fmt.Fprintln(c.stdout)
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("What the ledgers say, run by run (mcpshim ledger %s):", *dir))
		runLedger(ctx, c, []string{*dir})
		fmt.Fprintln(c.stdout)
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("The ledgers are in %s; try mcpshim ledger show, why, stats or report --html on them.", *dir))
	}
	if len(unexpected) > 0 {
		return 1
	}
	return 0
}

// run starts the shim in front of the scenario's fixture, runs the client
// script over real pipes, waits for the shim to exit and reads its ledger.
// Whatever happens, the shim is gone when run returns: it is stopped with
// SIGTERM, then SIGKILL, and its guard process takes the server's group down.
func (sc demoScenario) run(ctx context.Context, exe, dir string, env []string) demoResult {
	res := demoResult{Name: sc.name, About: sc.about, Expected: sc.want, Ledger: filepath.Join(dir, sc.name+".jsonl")}
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
		patience = demoPatience
	}
	dc := &demoClient{c: testfixtures.NewClient(stdin, stdout), patience: patience}
	sc.script(ctx, dc)
	stdin.Close()
	// The shim closes stdout when it exits; reading to the end first keeps
	// Wait from cutting the pipe while a line is still in it.
	if !dc.drain(ctx, demoExitGrace) {
		cancel()
	}
	err = cmd.Wait()
	res.ShimStatus = cmd.ProcessState.ExitCode()
	res.Client = dc.notes

	entries, runs, rerr := demoReadLedger(res.Ledger, offset)
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
			res.Error += "; stderr: " + demoClip(s, 200)
		}
		return res
	}
	res.summarize(entries, runs)
	return res
}

// demoReadLedger reads the records of path written past offset (all of
// them when the file is shorter: it was rotated meanwhile): the entries in
// order, and the runs as the ledger reader judges them.
func demoReadLedger(path string, offset int64) ([]ledger.Entry, []report.Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() >= offset {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, nil, err
		}
	}
	var entries []ledger.Entry
	sum := report.NewSummary()
	sc := ledger.NewScanner(f)
	for sc.Scan() {
		e, err := sc.Decode()
		if err != nil {
			continue
		}
		entries = append(entries, e)
		sum.Add(sc.Entry())
	}
	// Every shim has exited by now: a run without an exit record is unrecorded, not alive.
	return entries, sum.Runs(time.Now(), nil), sc.Err()
}

// summarize fills the events and the runs; the scenario's outcome is its
// last run's.
func (r *demoResult) summarize(entries []ledger.Entry, runs []report.Run) {
	base := entries[0].Time
	runIndex := map[string]int{}
	for _, e := range entries {
		n, ok := runIndex[e.Run]
		if !ok && e.Run != "" {
			n = len(runIndex) + 1
			runIndex[e.Run] = n
		}
		r.Events = append(r.Events, demoEvent{
			AtMS:   float64(e.Time.Sub(base).Microseconds()) / 1000,
			Run:    n,
			Phase:  string(e.Phase),
			Event:  e.Event,
			Fields: demoKeyFields(e),
		})
	}
	for i := range runs {
		why := runs[i].Reason
		if runs[i].Advice != "" {
			why += " — " + runs[i].Advice
		}
		r.Runs = append(r.Runs, demoRun{Run: runs[i], Why: why})
	}
	if len(r.Runs) > 0 {
		last := r.Runs[len(r.Runs)-1]
		r.Outcome, r.Why = last.Outcome, last.Why
	}
}

// demoKeys are the fields worth a reader's glance, per event; other events
// show all their fields but the bulky ones.
var demoKeys = map[string][]string{
	phases.SpawnRequested:      {"generation", "argv"},
	phases.Spawned:             {"pid"},
	phases.SpawnFailed:         {"error_class", "error"},
	phases.Exited:              {"exit_code", "signal", "stderr_tail", "requested_by_shim", "last_event"},
	phases.InitializeReceived:  {"protocol_version", "client_name"},
	phases.InitializeResponded: {"server_name", "protocol_version", "latency_ms"},
	phases.InitializeFailed:    {"code", "message"},
	phases.InitializedReceived: {},
	phases.DiscoverReceived:    {"protocol_version"},
	phases.DiscoverResponded:   {"server_name", "supported_versions", "latency_ms"},
	phases.DiscoverFailed:      {"code", "message"},
	phases.ModernRequest:       {"method", "protocol_version"},
	phases.HandshakeTimeout:    {"last_event", "timeout_ms"},
	phases.ToolsListReceived:   {},
	phases.ToolsListResponded:  {"tool_count", "tools", "warning", "latency_ms"},
	phases.ToolCallReceived:    {"request_id", "tool"},
	phases.ToolCallResponded:   {"request_id", "tool", "outcome", "code", "message", "latency_ms"},
	phases.StdoutNoise:         {"preview", "before_handshake"},
	phases.PendingFailed:       {"request_id", "method", "tool"},
	phases.ClientDisconnected:  {"reason"},
	phases.KillRequested:       {"signal", "reason"},
	phases.RestartScheduled:    {"attempt", "delay_ms", "reason"},
	phases.RestartsExhausted:   {"attempts", "reason"},
}

var demoBulky = map[string]bool{"env_names": true, "path": true, "cwd": true, "command": true, "tool_digests": true,
	"surface_sha256": true, "args_sha256": true, "sha256": true, "body": true, "previous_run": true, "stderr_tail": true}

func demoKeyFields(e ledger.Entry) map[string]any {
	keys, ok := demoKeys[e.Event]
	if !ok {
		for _, k := range e.FieldKeys() {
			if !demoBulky[k] {
				keys = append(keys, k)
			}
		}
	}
	out := map[string]any{}
	if e.Event == phases.Spawned {
		out["pid"] = e.PID // a common field: Decode keeps it out of Fields
	}
	for _, k := range keys {
		if v, ok := e.Fields[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// print writes the scenario as text at most width columns wide: what the
// client saw, the ledger's events with their key fields (cut to the width:
// the ledger has the rest), and the outcome of each run.
func (r *demoResult) print(w io.Writer, width int) {
	fmt.Fprintln(w)
	cmdline.Hang(w, width, "", r.Name+": "+r.About)
	for _, n := range r.Client {
		cmdline.Hang(w, width, "  client  ", n)
	}
	for _, e := range r.Events {
		line := fmt.Sprintf("  %-7s %-12s %-23s %s", demoAt(e.AtMS), e.Phase, e.Event, demoFields(e))
		fmt.Fprintln(w, demoClip(strings.TrimRight(line, " "), width))
	}
	if r.Error != "" {
		cmdline.Hang(w, width, "  ERROR   ", r.Error)
		return
	}
	for i, run := range r.Runs {
		label := run.Outcome
		if len(r.Runs) > 1 {
			label = fmt.Sprintf("run %d %s", i+1, run.Outcome)
		}
		cmdline.Hang(w, width, "  => "+label+"  ", run.Why)
	}
	if r.Outcome != r.Expected {
		fmt.Fprintf(w, "  (the tour expected %s)\n", r.Expected)
	}
}

func demoAt(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("+%.0fms", ms)
	}
	return fmt.Sprintf("+%.2fs", ms/1000)
}

// demoFields renders the key fields in their table order.
func demoFields(e demoEvent) string {
	keys, ok := demoKeys[e.Event]
	if !ok {
		keys = make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var parts []string
	for _, k := range keys {
		v, ok := e.Fields[k]
		if !ok {
			continue
		}
		switch k {
		case "argv":
			v = strings.Join(demoStrings(v), " ")
		case "stderr_tail": // the last line says why; the ledger has the rest
			tail := demoStrings(v)
			if len(tail) == 0 {
				continue
			}
			k, v = "stderr", tail[len(tail)-1]
		}
		if n, ok := v.(json.Number); ok && strings.HasSuffix(k, "_ms") {
			ms, _ := n.Float64()
			k, v = strings.TrimSuffix(k, "_ms"), verdict.FormatMS(ms)
		}
		parts = append(parts, k+"="+demoValue(v))
	}
	return strings.Join(parts, " ")
}

func demoStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func demoValue(v any) string {
	switch v := v.(type) {
	case string:
		v = demoClip(v, 60)
		switch {
		case strings.Contains(v, `"`) && strconv.CanBackquote(v): // JSON reads better unescaped
			return "`" + v + "`"
		case v == "" || strings.ContainsAny(v, " \"=`"):
			return strconv.Quote(v)
		}
		return v
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return strings.Join(demoStrings(v), ",")
	}
	return fmt.Sprint(v)
}

func demoClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// demoClient is the tour's scripted MCP client. Each step notes what the
// client saw, and reports whether it got a result.
type demoClient struct {
	c        *testfixtures.Client
	patience time.Duration
	modern   bool // the session speaks 2026-07-28: _meta on every request
	lastID   int
	notes    []string
}

func (dc *demoClient) note(format string, args ...any) {
	dc.notes = append(dc.notes, fmt.Sprintf(format, args...))
}

// call sends a request and waits for its answer, noting the lines that are
// not JSON on the way, as a strict client would choke on them.
func (dc *demoClient) call(ctx context.Context, label, method, params string) (json.RawMessage, bool) {
	dc.lastID++
	id := strconv.Itoa(dc.lastID)
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		msg += `,"params":` + params
	}
	if err := dc.c.Send(msg + "}"); err != nil {
		dc.note("%s → could not send: %v", label, err)
		return nil, false
	}
	want, _ := mcp.ParseID([]byte(id))
	ctx, cancel := context.WithTimeout(ctx, dc.patience)
	defer cancel()
	for {
		line, err := dc.c.ReadLine(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			dc.note("%s → no answer within %v", label, dc.patience)
			return nil, false
		}
		if err != nil {
			dc.note("%s → no answer: the shim closed the stream", label)
			return nil, false
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil {
			dc.note("read a line that is not JSON: %s", demoClip(string(line), 60))
			continue
		}
		if got, _ := mcp.ParseID(m.ID); m.Method != "" || got != want {
			continue // a notification, or a request of the server's
		}
		if m.Error != nil {
			dc.note("%s → error %d: %s", label, m.Error.Code, m.Error.Message)
			return nil, false
		}
		return m.Result, true
	}
}

// meta is the _meta member every 2026-07-28 request carries: the required
// protocolVersion and clientCapabilities, and clientInfo.
func (dc *demoClient) meta() string {
	return `"_meta":{"` + mcp.MetaProtocolVersion + `":"` + demoModern + `","` + mcp.MetaClientCapabilities + `":{},"` +
		mcp.MetaClientInfo + `":{"name":"mcpshim-demo","version":"1"}}`
}

func (dc *demoClient) initialize(ctx context.Context) bool {
	res, ok := dc.call(ctx, mcp.MethodInitialize, mcp.MethodInitialize,
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpshim-demo","version":"1"}}`)
	if !ok {
		return false
	}
	r, _ := mcp.ParseInitializeResult(res) // a result the client cannot read is noted as empty
	info := r.Server()
	dc.note("initialize → %s %s, protocol %s", info.Name, info.Version, r.ProtocolVersion)
	return dc.c.Send(string(mcp.NotificationLine(mcp.NotificationInitialized))) == nil
}

func (dc *demoClient) discover(ctx context.Context) bool {
	dc.modern = true
	res, ok := dc.call(ctx, mcp.MethodDiscover, mcp.MethodDiscover, "{"+dc.meta()+"}")
	if !ok {
		return false
	}
	r, _ := mcp.ParseDiscoverResult(res)
	info := r.Server()
	dc.note("server/discover → %s %s, supports %s", info.Name, info.Version, strings.Join(r.SupportedVersions, ", "))
	return true
}

func (dc *demoClient) listTools(ctx context.Context) bool {
	params := ""
	if dc.modern {
		params = "{" + dc.meta() + "}"
	}
	res, ok := dc.call(ctx, mcp.MethodListTools, mcp.MethodListTools, params)
	if !ok {
		return false
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(res, &r)
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	list := verdict.Plural(len(names), "tool")
	if len(names) > 0 {
		list += ": " + strings.Join(names, ", ")
	}
	dc.note("tools/list → %s", list)
	return true
}

func (dc *demoClient) callTool(ctx context.Context, tool, args string) bool {
	params := `{"name":"` + tool + `","arguments":` + args
	if dc.modern {
		params += "," + dc.meta()
	}
	label := "tools/call " + tool + " " + args
	res, ok := dc.call(ctx, label, mcp.MethodCallTool, params+"}")
	if !ok {
		return false
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(res, &r)
	var text []string
	for _, c := range r.Content {
		text = append(text, c.Text)
	}
	answer := strconv.Quote(strings.Join(text, " "))
	if r.IsError {
		answer = "isError: " + answer
	}
	dc.note("%s → %s", label, answer)
	return true
}

// drain reads the shim's stdout to its end; it reports false when the end
// did not come within d.
func (dc *demoClient) drain(ctx context.Context, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		_, err := dc.c.ReadLine(ctx)
		if err == nil {
			continue
		}
		return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	}
}
