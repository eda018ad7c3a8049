package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/probe"
)

// fixtureEntry is a config entry running a built-in fixture server as a real process.
func fixtureEntry(t *testing.T, fixture string, args ...string) map[string]any {
	return map[string]any{"command": fixtureBin(t), "args": append([]string{"fixture", fixture}, args...)}
}

// writeMCPConfig writes a Claude Code config with these servers and returns its path.
func writeMCPConfig(t *testing.T, dir string, servers map[string]any) string {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// probeEnv is the test's environment without the report fixture's variables,
// with a private cache directory, plus extra.
func probeEnv(cacheDir string, extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "REPORT_") || strings.HasPrefix(kv, "XDG_CACHE_HOME=")
	})
	return append(append(env, "XDG_CACHE_HOME="+cacheDir), extra...)
}

// runCLI runs the command in-process and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, env, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// probeJSON runs probe --json and decodes its report.
func probeJSON(t *testing.T, env []string, args ...string) (int, probe.Report) {
	t.Helper()
	code, out, errs := runCLI(t, env, append([]string{"probe", "--json"}, args...)...)
	var rep probe.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("probe --json %v: %v\nstdout: %s\nstderr: %s", args, err, out, errs)
	}
	return code, rep
}

func probeResult(t *testing.T, rep probe.Report, server string) probe.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Server == server {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", server, rep.Results)
	return probe.Result{}
}

func TestProbeExitStatus(t *testing.T) {
	cases := []struct {
		name    string
		servers map[string]any
		want    int
	}{
		{"all ready", map[string]any{"a": fixtureEntry(t, "healthy"), "b": fixtureEntry(t, "zero-tools")}, 0},
		{"only timeouts", map[string]any{"a": fixtureEntry(t, "healthy"), "b": fixtureEntry(t, "silent")}, exitTempFail},
		{"a crash", map[string]any{"a": fixtureEntry(t, "exit-early"), "b": fixtureEntry(t, "silent")}, exitConfig},
		{"a rejection", map[string]any{"a": fixtureEntry(t, "protocol-reject")}, exitConfig},
		{"a mistyped command", map[string]any{"ghost": map[string]any{"command": "./no-such-binary"}}, exitConfig},
		{"an unset variable", map[string]any{"a": map[string]any{"command": fixtureBin(t), "args": []string{"fixture", "healthy", "${NO_SUCH_VAR_MCPSHIM}"}}}, exitConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeMCPConfig(t, t.TempDir(), c.servers)
			code, out, errs := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--timeout", "500ms", "--retries", "0")
			if code != c.want {
				t.Errorf("probe of %s: got exit %d, want %d\n%s%s", c.name, code, c.want, out, errs)
			}
		})
	}
}

// An unset variable is reported by name and server, and that server is not
// probed with the reference left in.
func TestProbeReportsUnsetVariable(t *testing.T) {
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
		"report": map[string]any{"command": fixtureBin(t), "args": []string{"fixture", "report"},
			"env": map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}},
	})
	code, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg)
	if code != exitConfig || len(rep.Results) != 0 || len(rep.Problems) != 1 ||
		rep.Problems[0].Server != "report" || !strings.Contains(rep.Problems[0].Msg, "${REPORT_API_TOKEN} is not set") {
		t.Fatalf("probe with REPORT_API_TOKEN unset: got exit %d, problems %+v, results %d; want 78 naming the variable and server, nothing probed",
			code, rep.Problems, len(rep.Results))
	}
}

// Fixable failures come first with their detail; every timeout is named on a
// line of its own, without -v.
func TestProbeHumanOutput(t *testing.T) {
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
		"a-ready": fixtureEntry(t, "healthy"), "b-silent": fixtureEntry(t, "silent"), "c-crash": fixtureEntry(t, "exit-early"), "d-empty": fixtureEntry(t, "zero-tools"),
	})
	env := probeEnv(t.TempDir())
	_, out, _ := runCLI(t, env, "probe", "--config", cfg, "--timeout", "500ms", "--retries", "0")
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[1], "EXITED") || !strings.Contains(lines[1], "c-crash") || !strings.Contains(lines[1], "fatal: missing API key (exit 1 ") {
		t.Errorf("probe output: got line 2 %q, want the crash first with its stderr line\n%s", lines[1], out)
	}
	if !strings.Contains(out, "TIMEOUT         b-silent") || !strings.Contains(out, "(initialize_received_no_response); stderr silent") {
		t.Errorf("probe output: got\n%s\nwant the timeout named with how far it got", out)
	}
	if !strings.Contains(out, "zero tools listed") {
		t.Errorf("probe output: got\n%s\nwant a zero-tools warning", out)
	}
	_, out, _ = runCLI(t, env, "probe", "--config", cfg, "--timeout", "500ms", "--retries", "0", "-v")
	if !strings.Contains(out, "b-silent") || !strings.Contains(out, "last event: initialize_received_no_response") || !strings.Contains(out, "tools: add, echo") {
		t.Errorf("probe -v output: got\n%s\nwant the timeout detailed and tool names", out)
	}
}

func TestProbeCache(t *testing.T) {
	cacheDir := t.TempDir()
	env := probeEnv(cacheDir)
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{"crash": fixtureEntry(t, "exit-early"), "silent": fixtureEntry(t, "silent")})
	args := []string{"--config", cfg, "--timeout", "5s", "--retries", "0"} // crash answers at once; at load 180 under -race it did not in 300ms (TIMEOUT, not cached)
	probeJSON(t, env, args...)
	_, rep := probeJSON(t, env, args...)
	if crash, silent := probeResult(t, rep, "crash"), probeResult(t, rep, "silent"); !crash.Cached || silent.Cached {
		t.Errorf("second probe: got crash cached=%v silent cached=%v, want EXITED from cache and TIMEOUT re-probed", crash.Cached, silent.Cached)
	}
	_, rep = probeJSON(t, env, append(args, "--fresh")...)
	if probeResult(t, rep, "crash").Cached {
		t.Errorf("probe --fresh: got crash from cache, want a re-probe")
	}
	// An unreadable cache is a re-probe, not an error.
	if err := os.WriteFile(filepath.Join(cacheDir, "mcpshim", "probe.json"), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, rep := probeJSON(t, env, args...)
	if probeResult(t, rep, "crash").Cached || code != exitConfig {
		t.Errorf("probe over a torn cache: got exit %d, crash cached=%v; want 78 and a re-probe", code, probeResult(t, rep, "crash").Cached)
	}
}

// Unattended runs: yesterday's 2 READY is today's 1, and that fails.
func TestProbeSinceLast(t *testing.T) {
	env := probeEnv(t.TempDir())
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy"), "b": fixtureEntry(t, "healthy", "--tools", "x")})
	if code, _ := probeJSON(t, env, "--config", cfg, "--since-last"); code != 0 {
		t.Fatalf("first probe --since-last: got exit %d, want 0", code)
	}
	writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy"), "b": fixtureEntry(t, "exit-early")})
	code, out, _ := runCLI(t, env, "probe", "--config", cfg, "--since-last")
	if code != exitConfig || !strings.Contains(out, "2 READY before, 1 server no longer: b") {
		t.Fatalf("probe --since-last after b broke: got exit %d\n%s\nwant 78 naming b", code, out)
	}
}

// An entry already behind mcpshim is probed as the real server it wraps.
func TestProbeWrappedEntry(t *testing.T) {
	bin := builtShim(t)
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
		"wrapped": map[string]any{"command": bin, "args": []string{"--name", "wrapped", "--ledger", "off", "--", bin, "fixture", "healthy", "--tools", "only"}},
	})
	_, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg)
	if r := probeResult(t, rep, "wrapped"); r.Outcome != probe.Ready || !slices.Equal(r.ToolNames(), []string{"only"}) {
		t.Fatalf("wrapped entry: got %s %q tools %v, want READY with the real server's tool only", r.Outcome, r.Detail, r.ToolNames())
	}
}

// An entry that puts the server after mcpshim's flags without "--" (the
// shim runs it) is probed as that server too: its own exit and stderr, not
// the shim's supervision of it.
func TestProbeWrappedEntryWithoutDashes(t *testing.T) {
	bin := builtShim(t)
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
		"crashy": map[string]any{"command": bin, "args": []string{"--name", "crashy", "--ledger", "off", "--quiet", bin, "fixture", "exit-early"}},
	})
	_, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg, "--timeout", "60s", "--retries", "0")
	r := probeResult(t, rep, "crashy")
	if r.Outcome != probe.Exited || r.ExitCode == nil || *r.ExitCode != 1 || !strings.Contains(r.Cause, "missing API key") {
		t.Fatalf("entry mcpshim --name crashy --ledger off --quiet BIN fixture exit-early: got %s %q exit %v cause %q; want EXITED, exit 1, its stderr line",
			r.Outcome, r.Detail, r.ExitStatus, r.Cause)
	}
}

func TestProbeCanary(t *testing.T) {
	cfg := writeMCPConfig(t, t.TempDir(), map[string]any{"rates": fixtureEntry(t, "iserror"), "echo": fixtureEntry(t, "healthy")})
	code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg,
		"--canary", `rates:fetch:{"url":"https://x"}:.`, "--canary", `echo:echo:{"text":"EUR/USD 1.08"}:^EUR/USD`)
	if code != exitConfig || !strings.Contains(out, "canary FAILED is_error: fetch returned isError: upstream answered 401: invalid api key") ||
		!strings.Contains(out, "canary ok: echo -> EUR/USD 1.08") {
		t.Fatalf("probe with canaries: got exit %d\n%s\nwant 78 with the isError canary failed and the echo canary ok", code, out)
	}
}

func TestProbeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "--canary", "nonsense"},
		{"probe", "--timeout", "0"},
		{"probe", "extra-argument"},
		{"lock", "--parallel", "many"},
		{"probe", "--parallel", "-1"},
	} {
		if code, _, _ := runCLI(t, probeEnv(t.TempDir()), args...); code != exitUsage {
			t.Errorf("mcpshim %q: got exit %d, want %d", args, code, exitUsage)
		}
	}
	code, _, errs := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", filepath.Join(t.TempDir(), "absent.json"))
	if code != exitConfig || !strings.Contains(errs, "absent.json") {
		t.Errorf("probe --config absent.json: got exit %d %q, want 78 naming the file", code, errs)
	}
}

// The fleet is probed in parallel: the silent servers wait out their
// deadlines at the same time, not one after another.
func TestProbeFleetIsParallel(t *testing.T) {
	servers := map[string]any{}
	for _, n := range []string{"s1", "s2", "s3"} {
		servers[n] = fixtureEntry(t, "silent")
	}
	for _, n := range []string{"h1", "h2", "h3", "h4"} {
		servers[n] = fixtureEntry(t, "healthy")
	}
	cfg := writeMCPConfig(t, t.TempDir(), servers)
	code, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg, "--timeout", "1s", "--retries", "0", "--parallel", "16")
	if code != exitTempFail || len(rep.Results) != 7 {
		t.Fatalf("fleet of 3 silent and 4 healthy: got exit %d with %d results, want 75 with 7", code, len(rep.Results))
	}
	var latestStart, earliestEnd time.Time
	for _, n := range []string{"s1", "s2", "s3"} {
		r := probeResult(t, rep, n)
		if end := r.Started.Add(r.Elapsed); earliestEnd.IsZero() || end.Before(earliestEnd) {
			earliestEnd = end
		}
		if r.Started.After(latestStart) {
			latestStart = r.Started
		}
	}
	if !latestStart.Before(earliestEnd) {
		t.Errorf("silent probes: last started %s, first ended %s; want their deadlines to overlap", latestStart, earliestEnd)
	}
}

// TestCanaryInTheLedger: a canary's verdict reaches the server's ledger, so
// the ledger says what the probe said (issue 33 item 9: the probe printed
// "canary FAILED" and exit 78 while the ledger said READY, and `ledger
// stats` counted the successful canary as 100% error under "(unknown)").
// Through the built shim: probe, then ledger, why and stats.
func TestCanaryInTheLedger(t *testing.T) {
	dir, led := t.TempDir(), t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{
		"rates": fixtureEntry(t, "iserror"), "echo": fixtureEntry(t, "healthy"),
		"gone": fixtureEntry(t, "healthy"), "other": fixtureEntry(t, "healthy"),
	})
	env := probeEnv(t.TempDir())
	code, out, errs := runBinary(t, env, "", "probe", "--config", cfg, "--ledger", led,
		"--canary", `rates:fetch:{"url":"https://x"}:.`, "--canary", `echo:echo:{"text":"EUR/USD 1.08"}:^EUR/USD`,
		"--canary", `gone:nope:{}:.`, "--canary", `other:echo:{"text":"GBP"}:^EUR`)
	if code != exitConfig {
		t.Fatalf("probe with canaries: got exit %d\n%s%s\nwant 78", code, out, errs)
	}
	want := map[string]string{ // server: the failed canary the ledger's reason must state, "" for none
		"rates": "canary FAILED is_error: fetch returned isError: upstream answered 401: invalid api key",
		"echo":  "",
		"gone":  "canary FAILED missing_tool: tools/list has no nope",
		"other": `canary FAILED mismatch: echo answered "GBP", which fails /^EUR/`,
	}
	var doc listDoc
	ledgerJSON(t, &doc, led)
	if len(doc.Runs) != len(want) {
		t.Fatalf("ledger of the probe: got %d runs, want %d: %v", len(doc.Runs), len(want), doc.Runs)
	}
	for _, r := range doc.Runs {
		name, detail := fmt.Sprint(r["server"]), fmt.Sprint(r["detail"])
		w := want[name]
		failed := r["failed"] == true
		switch {
		case r["outcome"] != "READY":
			t.Errorf("%s: got outcome %v, want READY (its handshake and tools/list were fine)", name, r["outcome"])
		case w == "" && (failed || strings.Contains(detail, "canary FAILED")):
			t.Errorf("%s: got failed=%v %q, want a run that did not fail", name, failed, detail)
		case w != "" && (!failed || !strings.Contains(detail, w) || r["advice"] == nil):
			t.Errorf("%s: got failed=%v %q advice %v, want failed, the reason stating %q, and advice", name, failed, detail, r["advice"], w)
		}
		if w != "" && !strings.Contains(out, w) {
			t.Errorf("probe's output does not say %q:\n%s", w, out)
		}
	}
	var failedDoc listDoc
	ledgerJSON(t, &failedDoc, "--failed", led)
	var failedNames []string
	for _, r := range failedDoc.Runs {
		failedNames = append(failedNames, fmt.Sprint(r["server"]))
	}
	if slices.Sort(failedNames); !slices.Equal(failedNames, []string{"gone", "other", "rates"}) {
		t.Errorf("ledger --failed: got %v, want the 3 whose canary failed: gone, other, rates", failedNames)
	}
	var stats struct {
		Servers []struct {
			Server string `json:"server"`
			Tools  []struct {
				Tool    string      `json:"tool"`
				Calls   json.Number `json:"calls"`
				OK      json.Number `json:"ok"`
				IsError json.Number `json:"is_error"`
				Errors  json.Number `json:"errors"`
			} `json:"tools"`
		} `json:"servers"`
	}
	ledgerJSON(t, &stats, "stats", led)
	calls := map[string]string{}
	for _, s := range stats.Servers {
		for _, tl := range s.Tools {
			calls[s.Server+"/"+tl.Tool] = fmt.Sprintf("%s calls %s ok %s isError %s error", tl.Calls, tl.OK, tl.IsError, tl.Errors)
		}
	}
	wantCalls := map[string]string{"rates/fetch": "1 calls 0 ok 1 isError 0 error", "echo/echo": "1 calls 1 ok 0 isError 0 error",
		"other/echo": "1 calls 1 ok 0 isError 0 error"}
	if !maps.Equal(calls, wantCalls) {
		t.Errorf("ledger stats of the canaries' calls: got %v, want %v", calls, wantCalls)
	}
}
