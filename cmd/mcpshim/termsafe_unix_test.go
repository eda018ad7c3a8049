//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNothingServerWroteDrivesTheTerminal seeds a ledger with a hostile
// server's run (its name, tool names, stderr, stdout noise, bodies and error
// messages all carry every control) and reads it back through every text
// output: the shim's own event lines, ledger, show, why, stats, tail, probe,
// lock and wrap. No control reaches the reader; the text is still there,
// escaped.
func TestNothingServerWroteDrivesTheTerminal(t *testing.T) {
	raw := hostileText()
	script, err := filepath.Abs("testdata/hostile/server.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ledger := filepath.Join(dir, "hostile.jsonl")
	env := []string{"HOSTILE_RAW=" + raw, "HOSTILE_JSON=" + jsonEscaped(raw), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "HOME=" + dir}
	builtShim(t)                 // before the environment changes: its go build needs the real cache
	t.Setenv("HOSTILE_RAW", raw) // start passes the test's environment on
	t.Setenv("HOSTILE_JSON", jsonEscaped(raw))
	// The server ends on its own while the client is still there, so the
	// shim says how, quoting its last stderr line.
	s := start(t, true, []string{"--name", "srv" + raw, "--ledger", ledger, "--capture", "full", "--restart", "never"}, script, "--flag", raw)
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	s.call("2", "tools/list", `{}`)
	s.call("3", "tools/call", `{"name":"t","arguments":{}}`)
	s.call("4", "ping", `{}`)
	s.call("5", "die", `{}`)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.stderr.String(), "its stderr said") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	s.finish()
	stderr := s.stderr.String()
	if !strings.Contains(stderr, "its stderr said") {
		t.Errorf("the shim did not say how the server ended; stderr:\n%q", stderr)
	}
	var own []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "mcpshim") {
			own = append(own, line)
		}
	}
	if len(own) < 5 {
		t.Fatalf("the shim printed %d event lines, want the run's events; stderr:\n%q", len(own), stderr)
	}
	for _, line := range own {
		if i := terminalControl(line); i >= 0 {
			t.Errorf("the shim's event line emits a control at byte %d: %q", i, line)
		}
	}

	config := filepath.Join(dir, ".mcp.json")
	cfg := `{"mcpServers":{"srv` + jsonEscaped(raw) + `":{"command":"` + script + `","args":["--flag","` + jsonEscaped(raw) + `"]}}}`
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, list, _ := runBinary(t, env, "", "ledger", "--json", ledger)
	var runs struct {
		Runs []struct{ Run string } `json:"runs"`
	}
	if err := json.Unmarshal([]byte(list), &runs); err != nil || len(runs.Runs) == 0 {
		t.Fatalf("ledger --json: %v, %d runs:\n%s", err, len(runs.Runs), list)
	}
	for _, args := range [][]string{
		{"ledger", ledger},
		{"ledger", "show", runs.Runs[0].Run, ledger},
		{"ledger", "why", ledger},
		{"ledger", "stats", ledger},
		{"ledger", "tail", "-n", "1000", ledger},
		{"probe", "-v", "--config", config},
		{"lock", "-v", "--config", config, "--out", filepath.Join(dir, "lock.json")},
		{"wrap", "--dry-run", "--config", config},
	} {
		_, stdout, stderr := runBinary(t, env, "", args...)
		for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if i := terminalControl(out); i >= 0 {
				line := out[strings.LastIndexByte(out[:i], '\n')+1:]
				if j := strings.IndexByte(line, '\n'); j >= 0 {
					line = line[:j]
				}
				t.Errorf("mcpshim %s: %s emits a control at byte %d, in line %q", strings.Join(args[:len(args)-1], " "), name, i, line)
			}
		}
		if !strings.Contains(stdout+stderr, `\x1b]52;c;aGVsbG8=`) && args[0] == "ledger" && args[1] != "stats" {
			t.Errorf("mcpshim %s: the hostile text is not shown escaped:\n%s", strings.Join(args, " "), stdout)
		}
	}
}
