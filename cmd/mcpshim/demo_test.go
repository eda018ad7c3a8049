package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/demo"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// TestDemo runs the whole tour through the built binary, as a new user would,
// and checks each scenario's outcome, the client's view of the restart, that
// every server is gone afterwards, and the text rendering of the same report.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eleven shims with real fixture servers (about 2s)")
	}
	bin := demoBin(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "demo", "--json", "--dir", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpshim demo --json: %v\nstderr: %s\nstdout: %s", err, stderr.String(), out)
	}
	var report demo.Report
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber() // as the ledger is read, so the text rendering sees the same values
	if err := d.Decode(&report); err != nil {
		t.Fatalf("decode report: %v\n%s", err, out)
	}
	if report.Dir != dir {
		t.Errorf("dir = %q, want %q", report.Dir, dir)
	}

	// Every run has ended by the time the demo reads its ledger: a server
	// that served well is ENDED (stopped by the shim when the client left).
	want := map[string]string{
		"healthy":            verdict.Ended,
		"modern":             verdict.Ended,
		"exit-early":         verdict.Exited,
		"banner":             verdict.Ended, // the client skipped the banner: a warning
		"zero-tools":         verdict.Ended,
		"iserror":            verdict.Ended,
		"silent":             verdict.Timeout,
		"init-no-response":   verdict.Timeout,
		"protocol-reject":    verdict.ProtocolError,
		"crash-mid-response": verdict.Crashed,
		"crash-restart":      verdict.Ended,
		"locked-report":      verdict.Ended, // stopped by the shim: the lock is enforced
	}
	got := map[string]demo.Result{}
	for _, r := range report.Scenarios {
		got[r.Name] = r
		if r.Error != "" {
			t.Errorf("%s: error %q", r.Name, r.Error)
		}
		if w, ok := want[r.Name]; !ok {
			t.Errorf("unexpected scenario %q", r.Name)
		} else if r.Outcome != w {
			t.Errorf("%s: got outcome %s (%s), want %s; events %v", r.Name, r.Outcome, r.Why, w, demoEventNames(r))
		}
		if _, err := os.Stat(filepath.Join(dir, r.Name+".jsonl")); err != nil {
			t.Errorf("%s: no ledger file: %v", r.Name, err)
		}
		for _, e := range r.Events {
			if e.Event != phases.Spawned {
				continue
			}
			pid, err := e.Fields["pid"].(json.Number).Int64()
			if err != nil || !processGone(int(pid)) {
				t.Errorf("%s: server pid %v is still running after the demo", r.Name, e.Fields["pid"])
			}
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("scenario %s missing from the report", name)
		}
	}

	restart := got["crash-restart"]
	var runs []string
	for _, run := range restart.Runs {
		runs = append(runs, run.Outcome)
	}
	if strings.Join(runs, " ") != "CRASHED ENDED" {
		t.Errorf("crash-restart runs = %v, want [CRASHED ENDED]", runs)
	}
	if c := restart.Client; len(c) == 0 || !strings.Contains(c[len(c)-1], `"three"`) {
		t.Errorf("crash-restart: client saw %q, want call 3 answered \"three\" by the restarted server", c)
	}
	if why := got["exit-early"].Why; !strings.Contains(why, "fatal: missing API key") {
		t.Errorf("exit-early: why = %q, want the server's last stderr line", why)
	}
	if runs := got["init-no-response"].Runs; len(runs) != 1 || runs[0].TimeoutLast != phases.InitializeReceivedNoResponse {
		t.Errorf("init-no-response: runs %+v, want one timed out at %s", runs, phases.InitializeReceivedNoResponse)
	}

	var text bytes.Buffer
	for _, r := range report.Scenarios {
		r.Print(&text, demo.Width)
	}
	for i, line := range strings.Split(text.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > demo.Width {
			t.Errorf("text line %d is %d wide, want at most %d: %q", i+1, n, demo.Width, line)
		}
	}
	for _, s := range []string{"=> run 1 CRASHED", "=> run 2 ENDED", "=> PROTOCOL_ERROR", `stderr="fatal: missing API key"`} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
}

func demoEventNames(r demo.Result) []string {
	var out []string
	for _, e := range r.Events {
		out = append(out, e.Event)
	}
	return out
}

func TestDemoUsage(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"extra"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"demo"}, args...), nil, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("mcpshim demo %v: got status %d, want %d; stderr %q", args, code, exitUsage, stderr.String())
		}
		if !strings.Contains(stderr.String(), "mcpshim demo --help") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("mcpshim demo %v: stderr %q, want one line pointing at mcpshim demo --help", args, stderr.String())
		}
	}
}
