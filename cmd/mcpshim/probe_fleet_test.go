package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/report"
)

// TestProbeMorningFleet, through the built binary: every server that is not
// READY is named on a line of its own; the summary line ends with the exit
// status, even when only the lock fails; --json gives every duration in
// milliseconds; a cached EXITED "not found" is forgotten as soon as the
// missing executable is installed; a remote server's probe is recorded as
// a remote one in its ledger.
func TestProbeMorningFleet(t *testing.T) {
	dir, bin, cache, state := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	shim := builtShim(t)
	servers := map[string]any{"ready": fixtureEntry(t, "healthy"), "tool": map[string]any{"command": "morning-tool"}}
	for _, name := range []string{"silent-1", "silent-2", "silent-3"} {
		servers[name] = fixtureEntry(t, "silent")
	}
	cfg := writeMCPConfig(t, dir, servers)
	env := []string{"HOME=" + dir, "PATH=" + systemPath(bin), "XDG_CACHE_HOME=" + cache, "XDG_STATE_HOME=" + state}
	args := []string{"probe", "--config", cfg, "--timeout", "1s", "--retries", "0"}

	code, out, _ := runBuilt(t, dir, env, args...)
	for _, want := range []string{"TIMEOUT         silent-1", "TIMEOUT         silent-2", "TIMEOUT         silent-3", "EXITED          tool", "READY           ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; code != exitConfig || !strings.HasSuffix(last, "; exit 78: fix the above") {
		t.Errorf("probe: exit %d, last line %q; want 78 and a summary saying so", code, last)
	}

	// Install the missing tool: the cached EXITED must not be answered.
	installScript(t, bin, "morning-tool", shim, "fixture", "healthy")
	_, out, _ = runBuilt(t, dir, env, append(args, "--json")...)
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep["results"].([]any) {
		r := r.(map[string]any)
		if r["server"] == "tool" && (r["outcome"] != "READY" || r["cached"] == true) {
			t.Errorf("after installing morning-tool: %v %v cached=%v, want READY, probed afresh", r["outcome"], r["detail"], r["cached"])
		}
		if _, ok := r["elapsed_ms"].(float64); !ok || r["elapsed_ns"] != nil {
			t.Errorf("result %v: want elapsed_ms and no other duration unit", r)
		}
	}
	if _, ok := rep["elapsed_ms"].(float64); !ok || rep["elapsed_s"] != nil {
		t.Errorf("report: elapsed %v, want elapsed_ms only", rep)
	}

	// Only the lock fails: the summary must not read as all good.
	healthy := writeMCPConfig(t, t.TempDir(), map[string]any{"ready": fixtureEntry(t, "healthy")})
	lock := filepath.Join(dir, "lock.json")
	if code, out, errs := runBuilt(t, dir, env, "lock", "--config", healthy, "--out", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errs)
	}
	writeMCPConfig(t, filepath.Dir(healthy), map[string]any{"ready": fixtureEntry(t, "healthy", "--tools", "other")})
	code, out, _ = runBuilt(t, dir, env, "probe", "--config", healthy, "--lock", lock)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; code != exitConfig || !strings.Contains(last, "1 READY, lock FAILED; exit 78") {
		t.Errorf("probe with a failed lock: exit %d, last line %q; want 78 and the lock named", code, last)
	}
}

// A remote server's probe is a remote run in its ledger: its outcome, not
// "EXITED, exit status unknown" for a process that never was.
func TestProbeRemoteRecordedAsRemote(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"far": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"}})
	env := []string{"HOME=" + dir, "PATH=" + systemPath(), "XDG_CACHE_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state}
	runBuilt(t, dir, env, "probe", "--config", cfg, "--timeout", "2s", "--retries", "0")
	_, out, errs := runBuilt(t, dir, env, "ledger", "--json", filepath.Join(state, "mcpshim"))
	var doc struct {
		Runs []report.Run `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Runs) != 1 {
		t.Fatalf("ledger --json: %v, %d runs\n%s%s", err, len(doc.Runs), out, errs)
	}
	if r := doc.Runs[0]; r.Outcome != "UNREACHABLE" || strings.Contains(r.Reason, "exit status unknown") {
		t.Errorf("the remote probe's run: %s %q, want UNREACHABLE with the probe's reason", r.Outcome, r.Reason)
	}
}
