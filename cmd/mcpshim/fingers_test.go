package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The conventions a person's fingers know (issue 38), through the built
// binary: no "--" behind a launcher that ate it, "-" for stdin and stdout,
// MCPSHIM_* for the flags set per machine, --color and FORCE_COLOR,
// repeated filters, --quiet.

// clientSession is what a client sends: a handshake, a listing, a call.
const clientSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fingers","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
`

// runBuiltStdin is runBuilt with stdin.
func runBuiltStdin(t *testing.T, dir string, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(builtShim(t), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatalf("mcpshim %q: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

// fingersEnv is a private home, state and temporary directory (ledger -
// spools stdin there; Windows without TMP or TEMP would use its own
// directory), plus extra.
func fingersEnv(dir string, extra ...string) []string {
	return append([]string{"HOME=" + dir, "PATH=" + systemPath(), "XDG_STATE_HOME=" + dir, "TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir, "GORACE=atexit_sleep_ms=0"}, extra...)
}

// recordSessions runs one client session behind the shim for each name,
// into the ledger file, and returns the server's own answers to it.
func recordSessions(t *testing.T, dir, ledgerFile string, names ...string) string {
	t.Helper()
	for _, name := range names {
		code, _, stderr := runBuiltStdin(t, dir, fingersEnv(dir), clientSession, "--name", name, "--ledger", ledgerFile, "--", builtShim(t), "fixture", "healthy")
		if code != 0 {
			t.Fatalf("session %s: exit %d\n%s", name, code, stderr)
		}
	}
	_, direct, _ := runBuiltStdin(t, dir, fingersEnv(dir), clientSession, "fixture", "healthy")
	return direct
}

// TestCommandWithoutDashDash: behind a launcher that split the line at its
// own first "--" (the Inspector CLI), the shim gets `--name x CMD ...`: it
// runs CMD. Where the word names a subcommand, or there is no command, the
// client's first request is answered with the error, so the client shows
// what was missing instead of "Connection closed". Before the fix each of
// these exited 64 with the error on stderr alone.
func TestCommandWithoutDashDash(t *testing.T) {
	dir := t.TempDir()
	ledgerFile := filepath.Join(dir, "l.jsonl")
	_, direct, _ := runBuiltStdin(t, dir, fingersEnv(dir), clientSession, "fixture", "healthy")
	for _, args := range [][]string{
		{"--name", "x", "--ledger", ledgerFile, builtShim(t), "fixture", "healthy"},
		{builtShim(t), "fixture", "healthy"},
	} {
		code, stdout, stderr := runBuiltStdin(t, dir, fingersEnv(dir), clientSession, args...)
		if code != 0 || stdout != direct {
			t.Errorf("mcpshim %q: exit %d, stdout\n%s\nwant exit 0 and the server's own\n%s\nstderr: %s", args, code, stdout, direct, stderr)
		}
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x", "ledger"}, "missing `--` before \\\"ledger\\\""},
		{[]string{"--name", "x"}, "missing `-- COMMAND`"},
		{[]string{"--capture", "bodies", "--", "true"}, `--capture \"bodies\": want meta or full`},
	} {
		code, stdout, stderr := runBuiltStdin(t, dir, fingersEnv(dir), clientSession, tt.args...)
		var answer struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err := json.Unmarshal([]byte(stdout), &answer)
		if code != exitUsage || err != nil || answer.ID != 1 || answer.Error.Code != -31000 || !strings.Contains(stdout, tt.want) || strings.Count(stdout, "\n") != 1 {
			t.Errorf("mcpshim %q: exit %d, stdout %q (%v)\nwant exit 64 and one error answering id 1 with %q\nstderr: %s", tt.args, code, stdout, err, tt.want, stderr)
		}
	}
}

// TestDashIsStdio: "-" is stdout for ledger report --html and lock --out,
// and stdin for a ledger PATH. Before the fix each wrote (or read) a file
// named "-".
func TestDashIsStdio(t *testing.T) {
	dir := t.TempDir()
	ledgerFile := filepath.Join(dir, "l.jsonl")
	recordSessions(t, dir, ledgerFile, "a")
	env := fingersEnv(dir)

	code, stdout, stderr := runBuilt(t, dir, env, "ledger", "report", "--html", "-", ledgerFile)
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stderr, "wrote the page to stdout: 1 run") {
		t.Errorf("ledger report --html -: exit %d, stdout starts %.40q, stderr %q; want the page on stdout and the summary on stderr", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("ledger report --html - wrote a file named -")
	}
	if code, _, stderr := runBuilt(t, dir, env, "ledger", "report", "--html", "-", "--json", ledgerFile); code != exitUsage || !strings.Contains(stderr, "both write stdout") {
		t.Errorf("ledger report --html - --json: exit %d, %q; want 64: both write stdout", code, stderr)
	}

	data, err := os.ReadFile(ledgerFile)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runBuiltStdin(t, dir, env, string(data), "ledger", "--json", "-")
	var list struct {
		Runs []struct {
			Server  string `json:"server"`
			Outcome string `json:"outcome"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list.Runs) != 1 || list.Runs[0].Server != "a" {
		t.Errorf("ledger --json - (the ledger on stdin): exit %d, %v, %+v\n%s; want server a's run", code, err, list, stderr)
	}
	code, stdout, stderr = runBuiltStdin(t, dir, env, string(data), "ledger", "why", "-")
	if code != 0 || !strings.Contains(stdout, "a") || stderr != "" {
		t.Errorf("ledger why - (read twice): exit %d\n%s%s", code, stdout, stderr)
	}

	cfg := writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy", "--tools", "x,y")})
	code, stdout, stderr = runBuilt(t, dir, env, "lock", "--config", cfg, "--out", "-")
	var lock map[string]any
	if err := json.Unmarshal([]byte(stdout), &lock); code != 0 || err != nil || !strings.Contains(stdout, `"x"`) || !strings.Contains(stderr, "wrote -") {
		t.Errorf("lock --out -: exit %d, %v\nstdout: %s\nstderr: %s\nwant the lock on stdout, the rest on stderr", code, err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("lock --out - wrote a file named -")
	}
}

// TestEnvAndRepeatedFilters: MCPSHIM_LEDGER is where mcpshim ledger reads
// by default, as the shim writes there; --server and --outcome repeated
// keep every one named. Before the fix ledger ignored MCPSHIM_LEDGER and a
// second --server replaced the first.
func TestEnvAndRepeatedFilters(t *testing.T) {
	dir := t.TempDir()
	ledgerFile := filepath.Join(dir, "elsewhere.jsonl")
	recordSessions(t, dir, ledgerFile, "a", "b", "c")
	servers := func(args ...string) []string {
		t.Helper()
		code, stdout, stderr := runBuilt(t, dir, fingersEnv(dir, "MCPSHIM_LEDGER="+ledgerFile), append([]string{"ledger", "--json"}, args...)...)
		var list struct {
			Runs []struct {
				Server string `json:"server"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil {
			t.Fatalf("ledger --json %q: exit %d, %v\n%s", args, code, err, stderr)
		}
		var got []string
		for _, r := range list.Runs {
			got = append(got, r.Server)
		}
		slices.Sort(got)
		return got
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"a", "b", "c"}},
		{[]string{"--server", "a", "--server", "c"}, []string{"a", "c"}},
		{[]string{"--server", "b"}, []string{"b"}},
		{[]string{"--outcome", "EXITED", "--outcome", "ENDED", "--server", "a"}, []string{"a"}},
		{[]string{"--outcome", "EXITED", "--outcome", "CRASHED"}, nil},
	} {
		if got := servers(tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("MCPSHIM_LEDGER=%s mcpshim ledger --json %q: servers %q, want %q", ledgerFile, tt.args, got, tt.want)
		}
	}
	// The stats and the tail take the same repeated --server.
	code, stdout, _ := runBuilt(t, dir, fingersEnv(dir, "MCPSHIM_LEDGER="+ledgerFile), "ledger", "tail", "-n", "1000", "--server", "a", "--server", "b")
	if code != 0 || !strings.Contains(stdout, " a ") || !strings.Contains(stdout, " b ") || strings.Contains(stdout, " c ") {
		t.Errorf("ledger tail --server a --server b: exit %d\n%s\nwant a's and b's records, not c's", code, stdout)
	}
}

// TestColorFlag: --color always|never and FORCE_COLOR beside NO_COLOR, in a
// pipe (auto there means none). MCPSHIM_COLOR is the flag's default.
func TestColorFlag(t *testing.T) {
	dir := t.TempDir()
	ledgerFile := filepath.Join(dir, "l.jsonl")
	recordSessions(t, dir, ledgerFile, "a")
	for _, tt := range []struct {
		env   []string
		args  []string
		color bool
	}{
		{nil, nil, false},
		{nil, []string{"--color", "always"}, true},
		{[]string{"FORCE_COLOR=1"}, nil, true},
		{[]string{"FORCE_COLOR=1", "NO_COLOR=1"}, nil, false},
		{[]string{"FORCE_COLOR=1"}, []string{"--color", "never"}, false},
		{[]string{"NO_COLOR=1"}, []string{"--color=always"}, true},
		{[]string{"MCPSHIM_COLOR=always"}, nil, true},
		{[]string{"MCPSHIM_COLOR=always"}, []string{"--color", "auto"}, false},
	} {
		args := append(append([]string{"ledger", "--wide"}, tt.args...), ledgerFile)
		code, stdout, stderr := runBuilt(t, dir, fingersEnv(dir, tt.env...), args...)
		if code != 0 {
			t.Fatalf("ledger %q: exit %d\n%s", args, code, stderr)
		}
		if got := strings.Contains(stdout, "\x1b["); got != tt.color {
			t.Errorf("%q mcpshim ledger %q: coloured %v, want %v\n%q", tt.env, tt.args, got, tt.color, stdout)
		}
	}
	code, _, stderr := runBuilt(t, dir, fingersEnv(dir), "ledger", "--color", "sometimes", ledgerFile)
	if code != exitUsage || !strings.Contains(stderr, "want auto, always or never") {
		t.Errorf("ledger --color sometimes: exit %d, %q; want 64 naming the values", code, stderr)
	}

	// The shim's events on stderr, coloured when asked even in a pipe.
	code, _, stderr = runBuiltStdin(t, dir, fingersEnv(dir, "FORCE_COLOR=1"), clientSession, "--name", "a", "--ledger", ledgerFile, "--", builtShim(t), "fixture", "healthy")
	if code != 0 || !strings.Contains(stderr, "\x1b[") {
		t.Errorf("FORCE_COLOR=1 mcpshim -- fixture: exit %d, stderr without colour:\n%q", code, stderr)
	}
	code, _, stderr = runBuiltStdin(t, dir, fingersEnv(dir, "FORCE_COLOR=1"), clientSession, "--color", "never", "--name", "a", "--ledger", ledgerFile, "--", builtShim(t), "fixture", "healthy")
	if code != 0 || strings.Contains(stderr, "\x1b[") {
		t.Errorf("FORCE_COLOR=1 mcpshim --color never: exit %d, stderr coloured:\n%q", code, stderr)
	}
}

// TestShimEnvFlags: MCPSHIM_LOG_FORMAT and MCPSHIM_CAPTURE are the defaults
// of --log-format and --capture; the flag wins.
func TestShimEnvFlags(t *testing.T) {
	dir := t.TempDir()
	ledgerFile := filepath.Join(dir, "l.jsonl")
	code, _, stderr := runBuiltStdin(t, dir, fingersEnv(dir, "MCPSHIM_LOG_FORMAT=json", "MCPSHIM_CAPTURE=full"), clientSession, "--name", "a", "--ledger", ledgerFile, "--", builtShim(t), "fixture", "healthy")
	first, _, _ := strings.Cut(stderr, "\n")
	if code != 0 || !json.Valid([]byte(first)) {
		t.Errorf("MCPSHIM_LOG_FORMAT=json: exit %d, first stderr line %q, want JSON", code, first)
	}
	if data, _ := os.ReadFile(ledgerFile); !strings.Contains(string(data), `hi`) {
		t.Errorf("MCPSHIM_CAPTURE=full: the ledger holds no body of the call:\n%s", data)
	}
	code, _, stderr = runBuiltStdin(t, dir, fingersEnv(dir, "MCPSHIM_LOG_FORMAT=json"), clientSession, "--log-format", "text", "--name", "a", "--ledger", ledgerFile, "--", builtShim(t), "fixture", "healthy")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 0 || json.Valid([]byte(first)) {
		t.Errorf("MCPSHIM_LOG_FORMAT=json --log-format text: exit %d, first stderr line %q, want text", code, first)
	}
}

// TestLockQuiet: lock --quiet says nothing when all went well.
func TestLockQuiet(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy")})
	code, stdout, stderr := runBuilt(t, dir, fingersEnv(dir), "lock", "--quiet", "--config", cfg, "--out", filepath.Join(dir, "lock.json"))
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("lock --quiet: exit %d, stdout %q, stderr %q; want 0 and nothing", code, stdout, stderr)
	}
}
