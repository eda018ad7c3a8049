package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

// reportEntry is the report server with its token from the environment.
func reportEntry(t *testing.T) map[string]any {
	return map[string]any{"command": fixtureBin(t), "args": []string{"fixture", "report"},
		"env": map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}", "REPORT_SCOPE": "${REPORT_SCOPE:-full}"}}
}

// reportRemote is the report server over Streamable HTTP (modern era, JSON
// replies): both tools for "Bearer test-token", read scope with "Bearer
// read-token", none otherwise, and a JSON-RPC result either way.
func reportRemote(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.NewDecoder(r.Body).Decode(&m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch m.Method {
		case "server/discover":
			result = map[string]any{"supportedVersions": []string{mcp.ModernVersion}, "capabilities": map[string]any{"tools": map[string]any{}},
				"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "report-remote", "version": "1.0.0"}}}
		case "tools/list":
			fetch := map[string]any{"name": "fetch_daily_report", "description": "Fetch the daily sales report", "inputSchema": map[string]any{"type": "object"}}
			list := map[string]any{"name": "list_report_dates", "description": "List available report dates", "inputSchema": map[string]any{"type": "object"}}
			tools := []any{}
			switch r.Header.Get("Authorization") {
			case "Bearer test-token":
				tools = []any{fetch, list}
			case "Bearer read-token":
				tools = []any{list}
			}
			result = map[string]any{"tools": tools}
		default:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// Over stdio and over Streamable HTTP: with the token the lock is
// written and verified; without it 2/2 are missing; read scope, 1/2.
func TestLockSeed003(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{
		"report": reportEntry(t),
		"report-remote": map[string]any{"type": "http", "url": reportRemote(t),
			"headers": map[string]string{"Authorization": "Bearer ${REPORT_API_TOKEN}"}}, // embedded, not the whole value
	})
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	cache := t.TempDir()

	code, out, errs := runCLI(t, probeEnv(cache, "REPORT_API_TOKEN=test-token"), "lock", "--config", cfg, "--out", lock)
	if code != 0 || !strings.Contains(out, "wrote "+lock+": 2 servers, 4 tools") {
		t.Fatalf("lock with the token: got exit %d\n%s%s\nwant 0 and 2 servers, 4 tools written", code, out, errs)
	}
	cases := []struct {
		env     []string
		code    int
		missing []string
	}{
		{[]string{"REPORT_API_TOKEN=test-token"}, 0, nil},
		{[]string{"REPORT_API_TOKEN="}, exitConfig, []string{
			"report: 2/2 tools missing -> fetch_daily_report, list_report_dates",
			"report-remote: 2/2 tools missing -> fetch_daily_report, list_report_dates"}},
		{[]string{"REPORT_API_TOKEN=read-token", "REPORT_SCOPE=read"}, exitConfig, []string{
			"report: 1/2 tools missing -> fetch_daily_report",
			"report-remote: 1/2 tools missing -> fetch_daily_report"}},
	}
	for _, c := range cases {
		code, out, _ := runCLI(t, probeEnv(cache, c.env...), "probe", "--config", cfg, "--lock", lock)
		if code != c.code {
			t.Errorf("probe --lock with %v: got exit %d, want %d\n%s", c.env, code, c.code, out)
		}
		for _, m := range c.missing {
			if !strings.Contains(out, m) {
				t.Errorf("probe --lock with %v: got\n%s\nwant the line %q", c.env, out, m)
			}
		}
	}
}

// A failed observation never becomes the expectation: an unresponsive
// server (on time), a mistyped command (EXITED with the OS error, no crash),
// zero tools unless allowed.
func TestLockRefusesFailedProbes(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{
		"report":  reportEntry(t),
		"stalled": fixtureEntry(t, "silent"),
		"ghost":   map[string]any{"command": "./no-such-binary"},
		"empty":   fixtureEntry(t, "zero-tools"),
	})
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	code, out, _ := runCLI(t, probeEnv(t.TempDir(), "REPORT_API_TOKEN=test-token"), "lock", "--config", cfg, "--out", lock, "--timeout", "1s", "--retries", "0")
	for _, want := range []string{
		"refusing to write " + lock + ": 3 servers cannot become an expectation",
		"  - stalled: TIMEOUT: no answer to initialize within 1s (initialize_received_no_response)",
		"  - ghost: EXITED: cannot start: fork/exec ./no-such-binary: " + noSuchFile,
		"  - empty: READY with zero tools (--allow-empty empty if it really has none)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lock with failing servers: got\n%s\nwant the line %q", out, want)
		}
	}
	if _, err := os.Stat(lock); code != exitConfig || !os.IsNotExist(err) {
		t.Fatalf("lock with failing servers: got exit %d and lock file stat %v, want 78 and no file", code, err)
	}

	cfg = writeMCPConfig(t, dir, map[string]any{"report": reportEntry(t), "empty": fixtureEntry(t, "zero-tools")})
	code, out, _ = runCLI(t, probeEnv(t.TempDir(), "REPORT_API_TOKEN=test-token"), "lock", "--config", cfg, "--out", lock, "--allow-empty", "empty")
	if code != 0 || !strings.Contains(out, "2 servers, 2 tools") {
		t.Fatalf("lock --allow-empty empty: got exit %d\n%s\nwant 0 with 2 servers, 2 tools", code, out)
	}
	code, out, _ = runCLI(t, probeEnv(t.TempDir(), "REPORT_API_TOKEN=test-token"), "probe", "--config", cfg, "--lock", lock)
	if code != 0 || !strings.Contains(out, "holds") {
		t.Fatalf("probe --lock after lock --allow-empty: got exit %d\n%s\nwant 0, the lock holding", code, out)
	}
}

func TestLockUnsetVariableRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"report": reportEntry(t)})
	code, out, _ := runCLI(t, probeEnv(t.TempDir()), "lock", "--config", cfg, "--out", filepath.Join(dir, "l.json"))
	if code != exitConfig || !strings.Contains(out, "${REPORT_API_TOKEN} is not set and has no default") {
		t.Fatalf("lock with REPORT_API_TOKEN unset: got exit %d\n%s\nwant 78 naming the variable", code, out)
	}
}

// lockHealthy locks a healthy server and lets edit change the file's JSON.
func lockHealthy(t *testing.T, dir string, edit func(servers map[string]map[string]map[string]string)) (cfg, lock string) {
	t.Helper()
	cfg = writeMCPConfig(t, dir, map[string]any{"h": fixtureEntry(t, "healthy")})
	lock = filepath.Join(dir, "lock.json")
	if code, out, errs := runCLI(t, probeEnv(t.TempDir()), "lock", "--config", cfg, "--out", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Version int                                     `json:"version"`
		Servers map[string]map[string]map[string]string `json:"servers"`
	}
	data, _ := os.ReadFile(lock)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc.Servers)
	data, _ = json.Marshal(doc)
	os.WriteFile(lock, data, 0o644)
	return cfg, lock
}

func TestProbeLockDrift(t *testing.T) {
	t.Run("changed fails only with --strict", func(t *testing.T) {
		cfg, lock := lockHealthy(t, t.TempDir(), func(s map[string]map[string]map[string]string) {
			s["h"]["echo"]["digest"] = lock.DigestPrefix + strings.Repeat("0", 64)
		})
		code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", lock)
		if code != 0 || !strings.Contains(out, "h: changed -> echo (passes without --strict)") {
			t.Errorf("probe --lock with a changed echo: got exit %d\n%s\nwant 0 reporting it changed", code, out)
		}
		if code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", lock, "--strict"); code != exitConfig {
			t.Errorf("probe --lock --strict with a changed echo: got exit %d\n%s\nwant 78", code, out)
		}
	})
	t.Run("probable rename", func(t *testing.T) {
		cfg, lock := lockHealthy(t, t.TempDir(), func(s map[string]map[string]map[string]string) {
			s["h"]["echo_text"] = s["h"]["echo"]
			s["h"]["echo_text"]["digest"] = lock.DigestPrefix + strings.Repeat("1", 64)
			delete(s["h"], "echo")
		})
		code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", lock)
		if code != exitConfig || !strings.Contains(out, "h: 1/2 tools missing -> echo_text") ||
			!strings.Contains(out, "h: probable rename echo_text -> echo") {
			t.Errorf("probe --lock with echo_text locked and echo offered: got exit %d\n%s\nwant 78 with a probable rename", code, out)
		}
	})
	t.Run("extras pass and are listed", func(t *testing.T) {
		cfg, lock := lockHealthy(t, t.TempDir(), func(s map[string]map[string]map[string]string) { delete(s["h"], "add") })
		code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", lock)
		if code != 0 || !strings.Contains(out, "h: not locked, passes -> add") {
			t.Errorf("probe --lock with add unlocked: got exit %d\n%s\nwant 0 listing add", code, out)
		}
	})
	t.Run("malformed lock fails closed", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeMCPConfig(t, dir, map[string]any{"h": fixtureEntry(t, "healthy")})
		for name, content := range map[string]string{"torn.json": `{"version":1,"servers":{`, "names.json": `{"report":["fetch_daily_report"]}`} {
			lock := filepath.Join(dir, name)
			os.WriteFile(lock, []byte(content), 0o644)
			code, out, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", lock)
			if code != exitConfig || !strings.Contains(out, "FAILED, cannot be read") {
				t.Errorf("probe --lock %s: got exit %d\n%s\nwant 78, the lock unreadable", content, code, out)
			}
		}
		if code, _, _ := runCLI(t, probeEnv(t.TempDir()), "probe", "--config", cfg, "--lock", filepath.Join(dir, "absent.json")); code != exitConfig {
			t.Errorf("probe --lock absent.json: got exit %d, want 78", code)
		}
	})
}

// TestProbeLockStalledServer: a locked server that does not answer in time
// leaves the lock unverified, neither held nor broken, and every line says
// so (issue 33 item 10: one output said "lock …: FAILED" and "lock holds").
// Only time may fix it: exit 75, as for the timeout alone.
func TestProbeLockStalledServer(t *testing.T) {
	dir := t.TempDir()
	cfg, lockFile := lockHealthy(t, dir, func(map[string]map[string]map[string]string) {})
	writeMCPConfig(t, dir, map[string]any{"h": fixtureEntry(t, "silent")})
	code, out, errs := runBinary(t, probeEnv(t.TempDir()), "", "probe", "--config", cfg, "--lock", lockFile, "--timeout", "1s", "--retries", "0", "--ledger", "off")
	if code != exitTempFail || strings.Contains(out, "FAILED") || strings.Contains(out, "holds") ||
		!strings.Contains(out, "lock "+lockFile+": unverified") || !strings.Contains(out, "h: 2 locked tools unverified: TIMEOUT") ||
		!strings.Contains(out, "1 TIMEOUT, lock unverified; exit 75") {
		t.Errorf("probe --lock with the locked server silent: got exit %d\n%s%s\nwant 75, the lock unverified on every line (h: TIMEOUT), neither FAILED nor holds", code, out, errs)
	}
	_, js, _ := runBinary(t, probeEnv(t.TempDir()), "", "probe", "--json", "--config", cfg, "--lock", lockFile, "--timeout", "1s", "--retries", "0", "--ledger", "off")
	var rep struct {
		Lock struct {
			State string `json:"state"`
		} `json:"lock"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || rep.Lock.State != "unverified" {
		t.Errorf("probe --json --lock with the locked server silent: got lock state %q (%v), want unverified\n%s", rep.Lock.State, err, js)
	}
}
