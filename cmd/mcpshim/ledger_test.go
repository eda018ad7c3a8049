package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// lt0 is when the synthetic ledgers start.
var lt0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// lrec is one record of a synthetic run, at lt0+dt.
type lrec struct {
	dt     time.Duration
	event  string
	fields []ledger.Field
}

// appendRun appends a run's records to a ledger file as the shim writes them.
func appendRun(t *testing.T, path, server, run string, pid int, recs ...lrec) {
	t.Helper()
	var buf bytes.Buffer
	for i, r := range recs {
		rec := ledger.Record{Time: lt0.Add(r.dt), Shim: "shim_" + server, Run: run, Seq: uint64(i + 1), Server: server,
			PID: pid, Phase: phaseOf(r.event), Event: r.event, Fields: r.fields}
		rec.Encode(&buf)
	}
	appendBytes(t, path, buf.Bytes())
}

func phaseOf(event string) phases.Phase {
	switch event {
	case phases.SpawnRequested, phases.Spawned, phases.SpawnFailed, phases.Exited:
		return phases.Launch
	case phases.ToolsListReceived, phases.ToolsListResponded:
		return phases.Discovery
	case phases.ToolCallReceived, phases.ToolCallResponded:
		return phases.Execution
	case phases.StdoutNoise:
		return phases.Transport
	case phases.PendingFailed, phases.KillRequested, phases.ClientDisconnected:
		return phases.Interruption
	case phases.RestartScheduled, phases.HandshakeReplayed:
		return phases.Supervision
	}
	return phases.Handshake
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// Run ids of the synthetic fleet: time-sortable, and sharing prefixes so
// that short ids and prefix resolution have work to do.
const (
	idHealthy  = "run_01KB3F0000AAAAAAAAAAAAAAAA"
	idExit     = "run_01KB3F0001BBBBBBBBBBBBBBBB"
	idReject   = "run_01KB3F0002CCCCCCCCCCCCCCCC"
	idTimeout  = "run_01KB3F0003DDDDDDDDDDDDDDDD"
	idCrash    = "run_01KB3F0004EEEEEEEEEEEEEEEE"
	idRestart  = "run_01KB3F0005FFFFFFFFFFFFFFFF"
	idSpawn    = "run_01KB3F0006GGGGGGGGGGGGGGGG"
	idRunning  = "run_01KB3F0007HHHHHHHHHHHHHHHH"
	idKilled   = "run_01KB3F0008JJJJJJJJJJJJJJJJ"
	deadPID    = 1 << 22 // above Linux's default pid_max and darwin's
	lms        = time.Millisecond
	lsec       = time.Second
	fatalLine  = "fatal: missing API key"
	rejectText = "unsupported protocolVersion"
)

var fld = ledger.F

// writeFleet writes a ledger directory covering every outcome: two files,
// a restart chain, a live run, a run whose shim was killed, a torn line and
// a garbage line. It returns the directory.
func writeFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fs := filepath.Join(dir, "fs.jsonl")
	appendRun(t, fs, "fs", idHealthy, 101,
		lrec{0, phases.SpawnRequested, []ledger.Field{fld("command", "/usr/bin/fs-mcp"), fld("generation", 1), fld("egress", "witnessed")}},
		lrec{2 * lms, phases.Spawned, []ledger.Field{fld("pgid", 101), fld("generation", 1)}},
		lrec{10 * lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1"), fld("protocol_version", "2025-11-25")}},
		lrec{13 * lms, phases.InitializeResponded, []ledger.Field{fld("request_id", "1"), fld("protocol_version", "2025-11-25"), fld("latency_ms", 3*lms)}},
		lrec{14 * lms, phases.InitializedReceived, nil},
		lrec{15 * lms, phases.ToolsListReceived, []ledger.Field{fld("request_id", "2")}},
		lrec{20 * lms, phases.ToolsListResponded, []ledger.Field{fld("request_id", "2"), fld("complete", true), fld("tool_count", 2), fld("tools", []string{"add", "echo"}), fld("latency_ms", 5*lms)}},
		lrec{30 * lms, phases.ToolCallReceived, []ledger.Field{fld("request_id", "3"), fld("tool", "echo")}},
		lrec{34 * lms, phases.ToolCallResponded, []ledger.Field{fld("request_id", "3"), fld("tool", "echo"), fld("outcome", "success"), fld("latency_ms", 4*lms)}},
		lrec{40 * lms, phases.ToolCallReceived, []ledger.Field{fld("request_id", "4"), fld("tool", "add")}},
		lrec{60 * lms, phases.ToolCallResponded, []ledger.Field{fld("request_id", "4"), fld("tool", "add"), fld("outcome", "is_error"), fld("latency_ms", 20*lms)}},
		lrec{2 * lsec, phases.ClientDisconnected, []ledger.Field{fld("reason", "stdin_eof")}},
		lrec{2*lsec + 5*lms, phases.Exited, []ledger.Field{fld("exit_code", 0), fld("requested_by_shim", true), fld("last_event", phases.ToolCallResponded), fld("handshake", true)}},
	)
	appendBytes(t, fs, []byte("npm WARN deprecated left-pad\n"))
	appendRun(t, fs, "fs", idRunning, os.Getpid(), // this test process: alive
		lrec{50 * lsec, phases.SpawnRequested, []ledger.Field{fld("generation", 1)}},
		lrec{50*lsec + 2*lms, phases.Spawned, nil},
		lrec{50*lsec + 5*lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1")}},
		lrec{50*lsec + 9*lms, phases.InitializeResponded, []ledger.Field{fld("request_id", "1"), fld("latency_ms", 4*lms)}},
	)

	git := filepath.Join(dir, "git.jsonl")
	appendRun(t, git, "git", idExit, 202,
		lrec{1 * lsec, phases.SpawnRequested, []ledger.Field{fld("generation", 1)}},
		lrec{1*lsec + 3*lms, phases.Spawned, nil},
		lrec{1*lsec + 4*lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1")}},
		lrec{1*lsec + 20*lms, phases.Exited, []ledger.Field{fld("exit_code", 1), fld("stderr_tail", []string{"loading config", fatalLine}), fld("last_event", phases.InitializeReceived), fld("handshake", false)}},
	)
	appendRun(t, git, "git", idReject, 203,
		lrec{3 * lsec, phases.SpawnRequested, []ledger.Field{fld("generation", 1)}},
		lrec{3*lsec + 1*lms, phases.Spawned, nil},
		lrec{3*lsec + 2*lms, phases.DiscoverReceived, []ledger.Field{fld("request_id", "0")}},
		lrec{3*lsec + 3*lms, phases.DiscoverFailed, []ledger.Field{fld("request_id", "0"), fld("code", -32601), fld("message", "method not found")}},
		lrec{3*lsec + 4*lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1")}},
		lrec{3*lsec + 5*lms, phases.InitializeFailed, []ledger.Field{fld("request_id", "1"), fld("code", -32602), fld("message", rejectText)}},
		lrec{3*lsec + 9*lms, phases.Exited, []ledger.Field{fld("exit_code", 0), fld("requested_by_shim", true)}},
	)
	appendRun(t, git, "db", idSpawn, 0,
		lrec{4 * lsec, phases.SpawnRequested, []ledger.Field{fld("command", "db-mcp")}},
		lrec{4*lsec + 1*lms, phases.SpawnFailed, []ledger.Field{fld("error_class", "not_found"), fld("error", `exec: "db-mcp": executable file not found in $PATH`), fld("hint", "use an absolute path")}},
	)

	slow := filepath.Join(dir, "slow.jsonl")
	appendRun(t, slow, "slow", idTimeout, 303,
		lrec{5 * lsec, phases.SpawnRequested, nil},
		lrec{5*lsec + 1*lms, phases.Spawned, nil},
		lrec{5*lsec + 2*lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1")}},
		lrec{6*lsec + 2*lms, phases.HandshakeTimeout, []ledger.Field{fld("last_event", phases.InitializeReceivedNoResponse), fld("timeout_ms", 1000.0)}},
		lrec{7 * lsec, phases.KillRequested, []ledger.Field{fld("signal", "SIGTERM"), fld("reason", "client left")}},
		lrec{7*lsec + 5*lms, phases.Exited, []ledger.Field{fld("exit_code", -1), fld("signal", "SIGTERM"), fld("requested_by_shim", true), fld("stderr_tail", []string{"fatal_error=Cannot read properties of undefined (reading 'tools')"})}},
	)
	crash := filepath.Join(dir, "crashy.jsonl")
	appendRun(t, crash, "crashy", idCrash, 404,
		lrec{10 * lsec, phases.SpawnRequested, []ledger.Field{fld("generation", 1)}},
		lrec{10*lsec + 1*lms, phases.Spawned, nil},
		lrec{10*lsec + 2*lms, phases.InitializeResponded, []ledger.Field{fld("request_id", "1"), fld("latency_ms", 1*lms)}},
		lrec{10*lsec + 3*lms, phases.ToolCallReceived, []ledger.Field{fld("request_id", "2"), fld("tool", "echo")}},
		lrec{10*lsec + 4*lms, phases.StdoutNoise, []ledger.Field{fld("bytes", 45), fld("preview", `{"jsonrpc":"2.0","id":2,"res`)}},
		lrec{10*lsec + 5*lms, phases.PendingFailed, []ledger.Field{fld("request_id", "2"), fld("method", "tools/call"), fld("tool", "echo"), fld("message", "server exited")}},
		lrec{10*lsec + 6*lms, phases.Exited, []ledger.Field{fld("exit_code", 1), fld("stderr_tail", []string{"panic: boom"}), fld("handshake", true)}},
		lrec{10*lsec + 7*lms, phases.RestartScheduled, []ledger.Field{fld("attempt", 1), fld("delay_ms", 100*lms), fld("previous_run", idCrash)}},
	)
	appendRun(t, crash, "crashy", idRestart, 405,
		lrec{10*lsec + 110*lms, phases.SpawnRequested, []ledger.Field{fld("generation", 2), fld("previous_run", idCrash)}},
		lrec{10*lsec + 112*lms, phases.Spawned, nil},
		lrec{10*lsec + 130*lms, phases.HandshakeReplayed, []ledger.Field{fld("protocol_version", "2025-11-25"), fld("latency_ms", 18*lms)}},
		lrec{10*lsec + 140*lms, phases.ToolCallReceived, []ledger.Field{fld("request_id", "3"), fld("tool", "echo")}},
		lrec{10*lsec + 142*lms, phases.ToolCallResponded, []ledger.Field{fld("request_id", "3"), fld("tool", "echo"), fld("outcome", "rpc_error"), fld("code", -32602), fld("latency_ms", 2*lms)}},
		lrec{11 * lsec, phases.Exited, []ledger.Field{fld("exit_code", 0), fld("handshake", true)}},
	)
	appendRun(t, crash, "crashy", idKilled, deadPID,
		lrec{20 * lsec, phases.SpawnRequested, []ledger.Field{fld("generation", 1)}},
		lrec{20*lsec + 1*lms, phases.Spawned, nil},
		lrec{20*lsec + 2*lms, phases.InitializeReceived, []ledger.Field{fld("request_id", "1")}},
	)
	appendBytes(t, crash, []byte(`{"ts":"2026-11-29T08:00:21Z","run":"`+idKilled+`","seq":4,"ev`)) // torn by the SIGKILL
	return dir
}

// runLedgerCmd runs `mcpshim ledger ARGS` in process with TZ=UTC and no terminal.
func runLedgerCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"ledger"}, args...), []string{"TZ=UTC", "HOME=" + t.TempDir()}, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func ledgerJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, errs, code := runLedgerCmd(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("ledger %v: exit %d, stderr %s", args, code, errs)
	}
	d := json.NewDecoder(strings.NewReader(out))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("ledger %v --json: %v\n%s", args, err, out)
	}
}

type listDoc struct {
	Files   []string         `json:"files"`
	Records int              `json:"records"`
	Skipped int              `json:"skipped_lines"`
	Runs    []map[string]any `json:"runs"`
}

func TestLedgerOutcomes(t *testing.T) {
	dir := writeFleet(t)
	var doc listDoc
	ledgerJSON(t, &doc, dir)
	got := map[string]string{}
	var order []string
	for _, r := range doc.Runs {
		got[r["run"].(string)] = r["outcome"].(string)
		order = append(order, r["run"].(string))
	}
	want := map[string]string{
		idHealthy: verdict.Ended, idExit: verdict.Exited, idReject: verdict.ProtocolError,
		idSpawn: verdict.Exited, idTimeout: verdict.Timeout, idCrash: verdict.Crashed,
		idRestart: verdict.Ended, idRunning: verdict.Ready, idKilled: verdict.Unrecorded,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes: got %v, want %v", got, want)
	}
	wantOrder := []string{idHealthy, idExit, idReject, idSpawn, idTimeout, idCrash, idRestart, idKilled, idRunning}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("order: got %v, want %v (oldest first)", order, wantOrder)
	}
	if doc.Skipped != 2 || len(doc.Files) != 4 {
		t.Errorf("got %d skipped lines in %d files, want 2 in 4", doc.Skipped, len(doc.Files))
	}
}

func TestLedgerTable(t *testing.T) {
	dir := writeFleet(t)
	out, errs, code := runLedgerCmd(t, dir)
	if code != 0 {
		t.Fatalf("ledger %s: exit %d, stderr %s", dir, code, errs)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour escapes without a terminal:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 11 {
		t.Fatalf("got %d lines, want a header, 9 runs and a footer:\n%s", len(lines), out)
	}
	for _, tc := range []struct{ server, outcome string }{
		{"fs", verdict.Ended}, {"git", verdict.Exited}, {"git", verdict.ProtocolError}, {"db", verdict.Exited},
		{"slow", verdict.Timeout}, {"crashy", verdict.Crashed}, {"crashy", verdict.Ended},
		{"crashy", verdict.Unrecorded}, {"fs", verdict.Ready},
	} {
		found := false
		for _, l := range lines[1:10] {
			fields := strings.Fields(l)
			if slices.Contains(fields, tc.server) && slices.Contains(fields, tc.outcome) {
				found = true
			}
		}
		if !found {
			t.Errorf("no row with server %s and outcome %s:\n%s", tc.server, tc.outcome, out)
		}
	}
	for _, l := range lines[1:10] {
		failed := !strings.Contains(l, verdict.Ended) && !strings.Contains(l, verdict.Ready)
		if strings.HasPrefix(l, "!") != failed {
			t.Errorf("row %q: got mark %v, want %v (failures stand out)", l, strings.HasPrefix(l, "!"), failed)
		}
	}
	for _, want := range []string{fatalLine, "1/1/0", "running", "unrecorded", `cannot start: exec: "db-mcp"`, "handshake refused: -32602 " + rejectText,
		"9 runs (6 failed, 1 running) in 4 files; 2 lines skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestLedgerFilters(t *testing.T) {
	dir := writeFleet(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--server", "git"}, []string{idExit, idReject}},
		// idRestart served, and its client got a JSON-RPC error to a call.
		{[]string{"--failed"}, []string{idExit, idReject, idSpawn, idTimeout, idCrash, idRestart, idKilled}},
		{[]string{"--outcome", "exited,protocol_error"}, []string{idExit, idReject, idSpawn}},
		{[]string{"--since", "2026-11-29T08:00:10"}, []string{idCrash, idRestart, idKilled, idRunning}},
		{[]string{"--server", "crashy", "--failed"}, []string{idCrash, idRestart, idKilled}},
		{[]string{filepath.Join(dir, "slow.jsonl")}, []string{idTimeout}},
	}
	for _, tc := range tests {
		var doc listDoc
		args := append(slices.Clone(tc.args), dir)
		if strings.HasSuffix(tc.args[0], ".jsonl") {
			args = tc.args
		}
		ledgerJSON(t, &doc, args...)
		var got []string
		for _, r := range doc.Runs {
			got = append(got, r["run"].(string))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ledger %v: got %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestLedgerJSONFields(t *testing.T) {
	dir := writeFleet(t)
	var doc listDoc
	ledgerJSON(t, &doc, "--server", "fs", dir)
	r := doc.Runs[0]
	for _, k := range []string{"run", "short", "server", "shim", "pid", "generation", "started", "ended", "duration_ms", "outcome",
		"alive", "last_event", "handshake", "initialized", "tools", "calls", "noise", "exited", "exit_code", "records"} {
		if _, ok := r[k]; !ok {
			t.Errorf("run JSON lacks %q: %v", k, r)
		}
	}
	calls := r["calls"].(map[string]any)
	if fmt.Sprint(calls) != "map[error:0 input_required:0 is_error:1 ok:1 received:2]" {
		t.Errorf("calls: got %v, want received 2, ok 1, is_error 1", calls)
	}
	if r["tools"] != json.Number("2") || r["short"] != "01KB3F0000" || r["egress"] != "witnessed" {
		t.Errorf("got tools %v short %v egress %v, want 2, 01KB3F0000, witnessed", r["tools"], r["short"], r["egress"])
	}
	running := doc.Runs[1]
	if running["alive"] != true || running["tools"] != nil || running["exit_code"] != nil {
		t.Errorf("running run: got alive %v tools %v exit_code %v, want true, null, null", running["alive"], running["tools"], running["exit_code"])
	}
}

func TestLedgerShow(t *testing.T) {
	dir := writeFleet(t)
	out, errs, code := runLedgerCmd(t, "show", "01KB3F0004", dir)
	if code != 0 {
		t.Fatalf("show: exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{
		idCrash, "CRASHED", "next run: 01KB3F0005 (ENDED",
		"\nhandshake\n", "\nexecution\n", "\ntransport\n",
		"  +0.000s  spawn_requested", "+0.002s  initialize_responded", "latency 1ms",
		"stderr tail\n  | panic: boom",
		"diagnosis: CRASHED: panic: boom (exit 1, 4ms after the handshake)\nwhat to do: the calls in flight got the shim's error",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	// The restarted run links back; a suffix as the shim prints it resolves too.
	out, _, _ = runLedgerCmd(t, "show", "…FFFFFF", dir)
	if !strings.Contains(out, "previous run: 01KB3F0004 (CRASHED") {
		t.Errorf("show …FFFFFF lacks the previous run:\n%s", out)
	}
	out, _, _ = runLedgerCmd(t, "show", "run_01KB3F0001", dir)
	if !strings.Contains(out, "diagnosis: EXITED: "+fatalLine+" (exit 1 before answering the handshake)\nwhat to do: fix what it says") {
		t.Errorf("show of the early exit: no diagnosis with the stderr line:\n%s", out)
	}
	_, errs, code = runLedgerCmd(t, "show", "01KB3F", dir)
	if code != 1 || !strings.Contains(errs, "ambiguous run prefix") {
		t.Errorf("show 01KB3F: got exit %d, stderr %q, want 1 and an ambiguity", code, errs)
	}
	_, errs, code = runLedgerCmd(t, "show", "nope", dir)
	if code != 1 || !strings.Contains(errs, "no such run") {
		t.Errorf("show nope: got exit %d, stderr %q, want 1, no such run", code, errs)
	}
	var doc struct {
		Run       map[string]any   `json:"run"`
		Diagnosis string           `json:"diagnosis"`
		Events    []map[string]any `json:"events"`
	}
	ledgerJSON(t, &doc, "show", "01KB3F0004", dir)
	if len(doc.Events) != 8 || doc.Events[2]["event"] != phases.InitializeResponded || doc.Events[2]["offset_ms"] != json.Number("2") {
		t.Errorf("show --json: got %d events, third %v, want 8, initialize_responded at offset 2", len(doc.Events), doc.Events[2])
	}
}

func TestLedgerWhy(t *testing.T) {
	dir := writeFleet(t)
	tests := []struct {
		args    []string
		answers string // launched, initialized, tools, external
		evident []string
	}{
		{[]string{"01KB3F0000"}, "yes yes yes no", []string{"spawned", "initialize_responded", "tool_count=2", "egress=witnessed"}},
		{[]string{"01KB3F0001"}, "yes no no unknown", []string{"exited exit_code=1"}},
		{[]string{"01KB3F0002"}, "yes no no unknown", []string{"initialize_failed"}},
		{[]string{"01KB3F0003"}, "yes no no unknown", []string{"handshake_timeout last_event=initialize_received_no_response"}},
		{[]string{"01KB3F0006"}, "no no no unknown", []string{"spawn_failed"}},
		{[]string{"--server", "crashy"}, "yes unknown unknown unknown", []string{"crashy · run 01KB3F0008"}},
	}
	for _, tc := range tests {
		var doc struct {
			Runs []struct {
				Answers []struct {
					Key, Answer, Reason string
					Evidence            map[string]any
				} `json:"answers"`
			} `json:"runs"`
		}
		ledgerJSON(t, &doc, append([]string{"why"}, append(slices.Clone(tc.args), dir)...)...)
		if len(doc.Runs) != 1 {
			t.Fatalf("why %v: got %d runs, want 1", tc.args, len(doc.Runs))
		}
		var got []string
		for _, a := range doc.Runs[0].Answers {
			got = append(got, a.Answer)
		}
		if strings.Join(got, " ") != tc.answers {
			t.Errorf("why %v: got %v, want %s", tc.args, got, tc.answers)
		}
		out, _, _ := runLedgerCmd(t, append([]string{"why"}, append(slices.Clone(tc.args), dir)...)...)
		for _, want := range tc.evident {
			if !strings.Contains(out, want) {
				t.Errorf("why %v lacks %q:\n%s", tc.args, want, out)
			}
		}
	}
	// No run named: the latest run of every server.
	out, _, code := runLedgerCmd(t, "why", dir)
	if code != 0 || strings.Count(out, " · run ") != 5 {
		t.Errorf("why with no run: got exit %d and %d runs, want 0 and one per server (5):\n%s", code, strings.Count(out, " · run "), out)
	}
}

func TestLedgerStats(t *testing.T) {
	dir := writeFleet(t)
	var doc struct {
		Servers []report.ServerStats `json:"servers"`
	}
	ledgerJSON(t, &doc, "stats", dir)
	var crashy, fs *report.ServerStats
	for i := range doc.Servers {
		switch doc.Servers[i].Server {
		case "crashy":
			crashy = &doc.Servers[i]
		case "fs":
			fs = &doc.Servers[i]
		}
	}
	if crashy == nil || fs == nil {
		t.Fatalf("stats: got %+v, want crashy and fs", doc.Servers)
	}
	if crashy.Runs != 3 || crashy.Restarts != 1 || crashy.Calls != 2 || crashy.Errors != 2 || crashy.ErrorRate != 1 ||
		crashy.Outcomes[verdict.Crashed] != 1 || crashy.Outcomes[verdict.Unrecorded] != 1 {
		t.Errorf("crashy: got %+v, want 3 runs, 1 restart, 2 calls both errors", *crashy)
	}
	if fs.Calls != 2 || fs.IsError != 1 || fs.IsErrorRate != 0.5 || fs.Latency == nil || len(fs.Tools) != 2 {
		t.Fatalf("fs: got %+v, want 2 calls, 1 isError, latency, two tools", *fs)
	}
	if add := fs.Tools[0]; add.Tool != "add" || add.Latency.P50 != 20 || add.Latency.P99 != 20 {
		t.Errorf("fs tool add: got %+v, want p50 = p99 = 20ms", add)
	}
	var since struct {
		Servers []report.ServerStats `json:"servers"`
	}
	ledgerJSON(t, &since, "stats", "--since", "2026-11-29T08:00:10", dir)
	var got []string
	for _, st := range since.Servers {
		got = append(got, fmt.Sprintf("%s runs=%d calls=%d", st.Server, st.Runs, st.Calls))
	}
	if want := []string{"crashy runs=3 calls=2", "fs runs=1 calls=0"}; !slices.Equal(got, want) {
		t.Errorf("stats --since 08:00:10: got %v, want %v (runs started and calls made since)", got, want)
	}
	out, _, _ := runLedgerCmd(t, "stats", dir)
	for _, want := range []string{"SERVER / tool", "crashy", "  echo", "100.0%", "50.0%", "CRASHED 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
}

func TestLedgerPrune(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	rotated := ledger.RotatedName(filepath.Join(dir, "fs.jsonl"), lt0)
	fresh := filepath.Join(dir, "fs.jsonl")
	notes := filepath.Join(dir, "notes.txt")
	for _, p := range []string{old, rotated, fresh, notes} {
		appendBytes(t, p, []byte("{}\n"))
	}
	month := time.Now().Add(-31 * 24 * time.Hour)
	for _, p := range []string{old, rotated, notes} {
		if err := os.Chtimes(p, month, month); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code := runLedgerCmd(t, "prune", "--older-than", "30d", "--dry-run", dir)
	if code != 0 || !strings.Contains(out, "would remove 2 files") {
		t.Errorf("prune --dry-run: got exit %d, %q, want 0, would remove 2 files", code, out)
	}
	for _, p := range []string{old, rotated} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("--dry-run removed %s", p)
		}
	}
	var doc struct {
		Removed []struct{ Path string } `json:"removed"`
		Kept    int                     `json:"kept"`
	}
	ledgerJSON(t, &doc, "prune", "--older-than", "30d", dir)
	if len(doc.Removed) != 2 || doc.Kept != 1 {
		t.Errorf("prune: got %+v, want the old and the rotated file removed, one kept", doc)
	}
	for p, want := range map[string]bool{old: false, rotated: false, fresh: true, notes: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("after prune, %s exists = %v, want %v", p, err == nil, want)
		}
	}
	if _, _, code := runLedgerCmd(t, "prune", dir); code != exitUsage {
		t.Errorf("prune without --older-than: got exit %d, want %d", code, exitUsage)
	}
}

func TestLedgerDefaultDirAndRotation(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "mcpshim")
	os.MkdirAll(dir, 0o700)
	live := filepath.Join(dir, "fs.jsonl")
	appendRun(t, ledger.RotatedName(live, lt0), "fs", idHealthy, 101,
		lrec{0, phases.SpawnRequested, nil}, lrec{lms, phases.Spawned, nil})
	appendRun(t, live, "fs", idHealthy, 101,
		lrec{2 * lms, phases.InitializeResponded, []ledger.Field{fld("request_id", "1")}},
		lrec{lsec, phases.Exited, []ledger.Field{fld("exit_code", 0), fld("handshake", true)}})
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"ledger", "--json"}, []string{"XDG_STATE_HOME=" + state}, strings.NewReader(""), &out, &errb)
	var doc listDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || code != 0 {
		t.Fatalf("ledger in the default dir: exit %d, %v, stderr %s", code, err, errb.String())
	}
	if len(doc.Files) != 2 || len(doc.Runs) != 1 || doc.Runs[0]["outcome"] != verdict.Ended || doc.Runs[0]["records"] != 4.0 {
		t.Errorf("got %d files and runs %v, want 2 files and one ENDED run of 4 records across the rotation", len(doc.Files), doc.Runs)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"ledger"}, []string{"XDG_STATE_HOME=" + t.TempDir()}, strings.NewReader(""), &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "no ledger yet") {
		t.Errorf("ledger with no default dir: got exit %d, stderr %q, want 0 and a note", code, errb.String())
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2h", now.Add(-2 * time.Hour), true},
		{"3d", now.Add(-72 * time.Hour), true},
		{"1w", now.Add(-7 * 24 * time.Hour), true},
		{"90m", now.Add(-90 * time.Minute), true},
		{"2026-11-29T08:00", time.Date(2026, 11, 29, 8, 0, 0, 0, cet), true},
		{"2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, cet), true},
		{"2026-11-29T08:00:00Z", time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), true},
		{"yesterday", time.Time{}, false},
		{"-2h", time.Time{}, false},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in, now, cet)
		if (err == nil) != tc.ok || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q): got %v, %v, want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestLedgerTailFollow follows a directory while records are appended, the
// file is rotated, a new ledger appears and a line arrives in two writes.
func TestLedgerTailFollow(t *testing.T) {
	if testing.Short() {
		t.Skip("polls in real time")
	}
	dir := writeFleet(t)
	out, _, code := runLedgerCmd(t, "tail", "-n", "3", dir)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "initialize_responded") {
		t.Fatalf("tail -n 3: got exit %d:\n%s\nwant the last 3 records", code, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout testkit.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"ledger", "tail", "-f", "-n", "0", dir}, []string{"TZ=UTC"}, strings.NewReader(""), &stdout, &stdout)
	}()
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(eventWait)
		for !strings.Contains(stdout.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("tail -f never printed %q:\n%s", what, stdout.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fs := filepath.Join(dir, "fs.jsonl")
	// Until tail prints a record appended after it started, it has not yet
	// taken the files' ends: append one until it does.
	deadline := time.Now().Add(eventWait)
	for !strings.Contains(stdout.String(), "tool=warmup") {
		if time.Now().After(deadline) {
			t.Fatalf("tail -f printed no appended record in %v:\n%s", eventWait, stdout.String())
		}
		appendRun(t, fs, "fs", idRunning, 1, lrec{59 * lsec, phases.ToolCallReceived, []ledger.Field{fld("tool", "warmup")}})
		time.Sleep(3 * tailPoll)
	}
	appendRun(t, fs, "fs", idRunning, 1, lrec{60 * lsec, phases.ToolCallReceived, []ledger.Field{fld("tool", "first")}})
	waitFor("tool=first")
	if err := os.Rename(fs, ledger.RotatedName(fs, time.Now())); err != nil {
		t.Fatal(err)
	}
	appendRun(t, fs, "fs", idRunning, 1, lrec{61 * lsec, phases.ToolCallReceived, []ledger.Field{fld("tool", "after_rotation")}})
	appendRun(t, filepath.Join(dir, "new.jsonl"), "new", "run_new", 1, lrec{62 * lsec, phases.Spawned, nil})
	waitFor("tool=after_rotation")
	waitFor("run_new")
	var line bytes.Buffer
	(&ledger.Record{Time: lt0.Add(63 * lsec), Run: idRunning, Server: "fs", Event: phases.ToolCallReceived,
		Fields: []ledger.Field{fld("tool", "split_write")}}).Encode(&line)
	appendBytes(t, fs, line.Bytes()[:20])
	time.Sleep(3 * tailPoll) // a chance to see the torn line; what follows holds either way
	appendBytes(t, fs, line.Bytes()[20:])
	waitFor("tool=split_write")
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("tail -f: exit %d after cancel", code)
	}
	if n := strings.Count(stdout.String(), "\n") - strings.Count(stdout.String(), "tool=warmup"); n != 4 {
		t.Errorf("tail -f printed %d lines, want 4 (each new record once):\n%s", n, stdout.String())
	}
}

// TestLedgerOnRealShims reads ledgers written by the real shim: the demo's
// fixtures, and a shim SIGKILLed mid-run.
func TestLedgerOnRealShims(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real shims and fixture servers")
	}
	bin := builtShim(t)
	dir := t.TempDir()
	if out, err := exec.Command(demoBin(t), "demo", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("mcpshim demo: %v\n%s", err, out)
	}
	// A shim killed while its server is up leaves a run with no end.
	cmd := exec.Command(bin, "--ledger", filepath.Join(dir, "killed.jsonl"), "--name", "killed", "--", bin, "fixture", "healthy")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("no initialize answer: %v", err)
	}
	waitEvent(t, filepath.Join(dir, "killed.jsonl"), "initialize_responded", eventWait)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	want := map[string]string{
		"healthy": verdict.Ended, "modern": verdict.Ended, "exit-early": verdict.Exited,
		"banner": verdict.Ended, "zero-tools": verdict.Ended, "iserror": verdict.Ended,
		"silent": verdict.Timeout, "init-no-response": verdict.Timeout, "protocol-reject": verdict.ProtocolError,
		"crash-mid-response": verdict.Crashed, "crash-restart": verdict.Ended, "killed": verdict.Unrecorded,
		"locked-report": verdict.Ended,
	}
	deadline := time.Now().Add(eventWait)
	for {
		var doc listDoc
		ledgerJSON(t, &doc, dir)
		got := map[string]string{}
		for _, r := range doc.Runs {
			got[r["server"].(string)] = r["outcome"].(string) // the last run of each server
		}
		if fmt.Sprint(got) == fmt.Sprint(want) && doc.Skipped == 0 {
			break
		}
		// The killed shim's server may take a moment to die with it.
		if time.Now().After(deadline) {
			t.Fatalf("outcomes of the demo ledgers: got %v (%d skipped), want %v", got, doc.Skipped, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _, _ := runLedgerCmd(t, "why", "--server", "exit-early", dir)
	if !strings.Contains(out, `no       the process ended before the handshake (exit 1): fatal: missing API key`) {
		t.Errorf("why --server exit-early:\n%s", out)
	}
	out, _, _ = runLedgerCmd(t, "why", "--server", "killed", dir)
	if !strings.Contains(out, "UNRECORDED") || !strings.Contains(out, "answered initialize with protocol 2025-11-25") {
		t.Errorf("why --server killed:\n%s", out)
	}
}

// TestLedgerJSONStreamed: --json, written a run at a time from the packed
// runs, is byte for byte the document printJSON made of every run judged in
// memory (report.Summary), on the scripted fleet and the hostile ledger; but
// for the end and duration, which of a run still going are now's
// (report.TestReadAsSummary holds them with a fixed now).
func TestLedgerJSONStreamed(t *testing.T) {
	dir := writeFleet(t)
	hostile, err := os.ReadFile("../../ledger/testdata/reader/hostile.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hostile.jsonl"), hostile, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := ledger.Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	sum := report.NewSummary()
	skipped := 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := ledger.NewScanner(f)
		for sc.Scan() {
			sum.Add(sc.Entry())
		}
		skipped += sc.Skipped()
		f.Close()
	}
	// The alive column asks the pids: none of the fleet's is this process's.
	runs := sum.Runs(time.Now(), proc.Alive)
	ids := &report.IDs{}
	for _, r := range runs {
		ids.Add(r.ID)
	}
	ids.Done()
	doc := struct {
		Files   []string  `json:"files"`
		Records int       `json:"records"`
		Skipped int       `json:"skipped_lines"`
		Lost    int       `json:"records_lost"`
		Runs    []runJSON `json:"runs"`
	}{files, sum.Records, skipped, sum.Lost, []runJSON{}}
	for _, r := range runs {
		doc.Runs = append(doc.Runs, runJSON{r, ids.Short(r.ID)})
	}
	var want bytes.Buffer
	if err := printJSON(&want, doc); err != nil {
		t.Fatal(err)
	}
	got, errs, code := runLedgerCmd(t, "--json", dir)
	now := regexp.MustCompile(`"ended": "[^"]*",\n( *)"duration_ms": [-0-9.e+]+`)
	got = now.ReplaceAllString(got, "${1}NOW")
	if want := now.ReplaceAllString(want.String(), "${1}NOW"); code != 0 || got != want {
		t.Errorf("ledger --json: exit %d, stderr %s\ngot  %s\nwant %s", code, errs, got, want)
	}
	empty := t.TempDir()
	got, _, _ = runLedgerCmd(t, "--json", empty)
	if want := "{\n  \"files\": [],\n  \"records\": 0,\n  \"skipped_lines\": 0,\n  \"records_lost\": 0,\n  \"runs\": []\n}\n"; got != want {
		t.Errorf("ledger --json of an empty directory:\ngot  %q\nwant %q", got, want)
	}
}
