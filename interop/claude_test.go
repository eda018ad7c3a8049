//go:build !windows

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// claudeEnv is the environment of the real Claude Code CLI in a throwaway
// HOME: no credentials, no update check, no telemetry, and a startup timeout
// that a loaded machine does not reach (the health check's default is 30 s).
func claudeEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "CLAUDE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "MCP_TIMEOUT=120000")
}

// claude runs the Claude Code CLI with args and returns what it printed.
func claude(t *testing.T, home, dir string, args ...string) string {
	t.Helper()
	return claudeWith(t, claudeEnv(home), dir, args...)
}

func claudeWith(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bins.modules, ".bin", "claude"), args...)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// claudeLog is everything Claude Code logged for server name: its
// per-server MCP log is what a user opens to see why a server failed.
func claudeLog(t *testing.T, home, name string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".cache", "claude-cli-nodejs", "*", "mcp-logs-"+name, "*.jsonl"))
	var all bytes.Buffer
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all.Write(b)
	}
	return all.String()
}

// TestClaudeCode registers servers with the real Claude Code CLI (`claude
// mcp add` in a throwaway HOME), wraps its config with `mcpshim wrap`, and
// checks what `claude mcp list` and `claude mcp get` report, and what its
// log keeps of the cause, for each outcome the README's troubleshooting table
// describes. No API key is needed: the health check only connects.
func TestClaudeCode(t *testing.T) {
	need(t, "node")
	if _, err := os.Stat(filepath.Join(bins.modules, ".bin", "claude")); err != nil {
		t.Fatalf("Claude Code is not installed in interop/node_modules (%v): run npm ci --prefix interop", err)
	}
	home, work, ledgers := t.TempDir(), t.TempDir(), t.TempDir()
	root := filepath.Join(work, "root")
	os.MkdirAll(root, 0o755)
	lock := filepath.Join(work, "mcp-tools.lock.json")
	// The report server without its token lists no tools.
	os.WriteFile(lock, []byte(`{"version":1,"servers":{"locked":{
		"fetch_daily_report":{"digest":"sha256/v1:00","shape":"sha256/v1:00"},
		"list_report_dates":{"digest":"sha256/v1:11","shape":"sha256/v1:11"}}}}`), 0o600)
	entries := []struct {
		name string
		argv []string
		list string // what `claude mcp list` says after the command line
	}{
		{"filesystem", []string{bins.node, npmServer("server-filesystem"), root}, "✔ Connected"},
		{"memory", []string{bins.node, npmServer("server-memory")}, "✔ Connected"},
		{"everything", []string{bins.node, npmServer("server-everything"), "stdio"}, "✔ Connected"},
		{"banner", []string{bins.shim, "fixture", "banner"}, "✔ Connected"},
		{"locked", []string{bins.shim, "fixture", "report"}, "! Connected · tools fetch failed"},
		{"missing", []string{"no-such-mcp-server"}, "✘ Failed to connect"},
		{"early", []string{bins.shim, "fixture", "exit-early"}, "✘ Failed to connect"},
		{"refused", []string{bins.shim, "fixture", "protocol-reject"}, "✘ Failed to connect"},
		{"crashy", []string{bins.shim, "fixture", "healthy", "--crash-after-handshake"}, "! Connected · tools fetch failed"},
	}
	config := filepath.Join(home, ".claude.json")
	for _, e := range entries {
		claude(t, home, work, append([]string{"mcp", "add", "-s", "user", e.name, "--"}, e.argv...)...)
	}
	wrap := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bins.shim, append([]string{"wrap", "--config", config, "--ledger", ledgers}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mcpshim wrap %v: %v\n%s", args, err, out)
		}
	}
	wrap("--server", "locked", "--lock", lock, "--lock-mode", "enforce")
	wrap()

	list := claude(t, home, work, "mcp", "list")
	for _, e := range entries {
		var line string
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, e.name+": ") {
				line = l
			}
		}
		if !strings.Contains(line, bins.shim+" --name "+e.name) || !strings.HasSuffix(line, " - "+e.list) {
			t.Errorf("claude mcp list, %s: got %q, want it wrapped and %q; whole list:\n%s", e.name, line, e.list, list)
		}
	}

	// What a user sees of the cause: `mcp get` says only "Failed to connect";
	// the server's log keeps the error the shim answered initialize with.
	causes := map[string]string{
		"missing": `Connection failed: MCP error -31000: mcpshim: server missing cannot start: executable file not found in PATH: \"no-such-mcp-server\"`,
		"early":   `Connection failed: MCP error -31000: mcpshim: server early exited with code 1 before answering: fatal: missing API key`,
	}
	for name, want := range causes {
		if get := claude(t, home, work, "mcp", "get", name); !strings.Contains(get, "Status: ✘ Failed to connect") {
			t.Errorf("claude mcp get %s:\n%s\nwant Status: ✘ Failed to connect", name, get)
		}
		if log := claudeLog(t, home, name); !strings.Contains(log, want) {
			t.Errorf("Claude Code's log for %s lacks %s:\n%s", name, want, log)
		}
	}
	if log := claudeLog(t, home, "refused"); !strings.Contains(log, "Connection failed: MCP error -32602: unsupported protocolVersion") {
		t.Errorf("Claude Code's log for refused lacks the server's refusal:\n%s", log)
	}
	if get := claude(t, home, work, "mcp", "get", "crashy"); !strings.Contains(get, "Status: ! Connected · tools fetch failed") ||
		!strings.Contains(get, "Issue: MCP error -31000: mcpshim: server crashy exited with code 3 before answering: fatal: exiting right after the handshake") {
		t.Errorf("claude mcp get crashy:\n%s\nwant ! Connected · tools fetch failed and the shim's error as its Issue", get)
	}
	// TIMEOUT: a server that never answers, with a 3 s MCP_TIMEOUT (a
	// second config, so that no other server meets that deadline).
	silentHome := t.TempDir()
	claude(t, silentHome, work, "mcp", "add", "-s", "user", "silent", "--", bins.shim, "fixture", "silent")
	if out, err := exec.Command(bins.shim, "wrap", "--config", filepath.Join(silentHome, ".claude.json"), "--ledger", ledgers).CombinedOutput(); err != nil {
		t.Fatalf("mcpshim wrap: %v\n%s", err, out)
	}
	env := append(claudeEnv(silentHome), "MCP_TIMEOUT=3000")
	if list := claudeWith(t, env, work, "mcp", "list"); !strings.Contains(list, " - ✘ Failed to connect") {
		t.Errorf("claude mcp list with a silent server:\n%s\nwant ✘ Failed to connect", list)
	}
	if log := claudeLog(t, silentHome, "silent"); !strings.Contains(log, `MCP server \"silent\" connection timed out after 3000ms`) {
		t.Errorf("Claude Code's log for silent lacks its timeout:\n%s", log)
	}
	get := claude(t, home, work, "mcp", "get", "locked")
	if !strings.Contains(get, "Status: ! Connected · tools fetch failed") ||
		!strings.Contains(get, "Issue: MCP error -31000: mcpshim: server locked lacks locked tools: fetch_daily_report, list_report_dates") {
		t.Errorf("claude mcp get locked:\n%s\nwant ! Connected · tools fetch failed and the missing tools as its Issue", get)
	}

	// The ledger's verdicts agree with what Claude Code showed.
	want := map[string]string{
		"filesystem": verdict.Ended, "memory": verdict.Ended, "everything": verdict.Ended,
		"banner": verdict.Ended, "missing": verdict.Exited, "early": verdict.Exited, "locked": verdict.Ended,
		"refused": verdict.ProtocolError, "crashy": verdict.Crashed, "silent": verdict.Timeout,
	}
	for name, outcome := range want {
		runs := ledgerRuns(t, filepath.Join(ledgers, name+".jsonl"))
		if len(runs) == 0 {
			t.Errorf("%s: no runs in its ledger", name)
			continue
		}
		for _, r := range runs {
			// A restart (the shim's default --restart on-failure) that Claude
			// Code's exit stopped before it could fail again ended with the
			// client: how far it got depends on the machine's load.
			if r.PreviousRun != "" && r.Outcome == verdict.Ended {
				continue
			}
			if r.Outcome != outcome {
				t.Errorf("%s: run %s outcome %s (%s), want %s as Claude Code showed", name, r.ID, r.Outcome, r.Reason, outcome)
			}
			if failed := name != "filesystem" && name != "memory" && name != "everything" && name != "banner"; r.Failed != failed {
				t.Errorf("%s: run %s Failed = %v, want %v", name, r.ID, r.Failed, failed)
			}
		}
	}
}

// ledgerRuns folds the ledger at path into its runs.
func ledgerRuns(t *testing.T, path string) []report.Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("read ledger: %v", err)
	}
	defer f.Close()
	s := report.NewSummary()
	for sc := ledger.NewScanner(f); sc.Scan(); {
		s.Add(sc.Entry())
	}
	return s.Runs(time.Now(), nil)
}

// TestClaudeCodeProject runs the real Claude Code CLI on a project's .mcp.json
// wrapped by mcpshim wrap --remote: its servers wait for approval (the README
// says so, in Claude Code's words), `claude mcp get` shows a bridged remote
// entry's Args on one line, and an approval by name survives the wrap.
func TestClaudeCodeProject(t *testing.T) {
	need(t, "node")
	if _, err := os.Stat(filepath.Join(bins.modules, ".bin", "claude")); err != nil {
		t.Fatalf("Claude Code is not installed in interop/node_modules (%v): run npm ci --prefix interop", err)
	}
	home, project := t.TempDir(), t.TempDir()
	claude(t, home, project, "mcp", "add", "-s", "project", "fs", "--", bins.shim, "fixture", "healthy")
	claude(t, home, project, "mcp", "add", "-s", "project", "--transport", "http", "linear", "https://mcp.linear.example/mcp",
		"--header", "Authorization: Bearer ${LINEAR_TOKEN}")
	cmd := exec.Command(bins.shim, "wrap", "--remote", "--config", filepath.Join(project, ".mcp.json"))
	cmd.Env, cmd.Dir = claudeEnv(home), project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpshim wrap --remote: %v\n%s", err, out)
	}
	if list := claude(t, home, project, "mcp", "list"); !strings.Contains(list, "fs: "+bins.shim+" --name fs -- ") ||
		!strings.Contains(list, "⏸ Pending approval (run `claude` to approve)") {
		t.Errorf("claude mcp list of a wrapped project config:\n%s\nwant fs wrapped and Pending approval", list)
	}
	get := claude(t, home, project, "mcp", "get", "linear")
	var args string
	for _, l := range strings.Split(get, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Args: ") {
			args = l
		}
	}
	if !strings.Contains(args, "--remote-entry {") || !strings.Contains(args, `"url": "https://mcp.linear.example/mcp"`) || !strings.HasSuffix(strings.TrimSpace(args), "}") {
		t.Errorf("claude mcp get linear:\n%s\nwant the whole original entry on the Args line", get)
	}

	// Approve fs as the prompt would (by name, under the project's key).
	state := filepath.Join(home, ".claude.json")
	var doc map[string]any
	b, _ := os.ReadFile(state)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	projects, _ := doc["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[project] = map[string]any{"enabledMcpjsonServers": []string{"fs"}, "hasTrustDialogAccepted": true}
	doc["projects"] = projects
	b, _ = json.Marshal(doc)
	os.WriteFile(state, b, 0o600)
	if list := claude(t, home, project, "mcp", "list"); !strings.Contains(list, "fs: "+bins.shim+" --name fs -- ") || !strings.Contains(list, "✔ Connected") {
		t.Errorf("claude mcp list after approving fs:\n%s\nwant it wrapped and Connected", list)
	}
}
