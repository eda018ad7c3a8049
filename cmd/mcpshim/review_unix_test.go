//go:build !windows

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runScript runs the shim in front of the shell script server with the
// client's lines on stdin (closed after them) and returns what the client read.
func runScript(t *testing.T, flags []string, input, script string) []byte {
	t.Helper()
	cmd, _ := shimCmd(t, flags, "sh", "-c", script)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("shim did not end; stderr:\n%s", errb.String())
	}
	return out.Bytes()
}

// TestReviewLockEnforceLongList: a tools/list answer longer than the hold is
// already streamed when the lock is checked; it cannot be swallowed, but the
// enforced lock must still stop the server and exit 78 rather than let the
// session go on as if warned.
func TestReviewLockEnforceLongList(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	os.WriteFile(lock, []byte(`{"version":1,"servers":{"test":{"a":{"digest":"sha256/v1:00","shape":"sha256/v1:00"}}}}`), 0o600)
	script := `read l; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}'
read l; read l; printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"},"description":"'; head -c 2097152 /dev/zero | tr '\0' d; printf '"}]}}\n'; cat >/dev/null`
	s := start(t, true, []string{"--lock", lock, "--lock-mode", "enforce"}, "sh", "-c", script)
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", `{}`)
	if status := s.finish(); status != 78 {
		t.Fatalf("exit status %d after a 2 MiB tools/list without the locked tool, want 78; stderr:\n%s", status, s.stderr.String())
	}
}

// TestReviewProbeBadShebang: probe says why a script whose #! interpreter is
// missing cannot start, as the shim does; "no such file or directory" alone
// names a file that is there.
func TestReviewProbeBadShebang(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	os.WriteFile(script, []byte("#!/nonexistent/node\n"), 0o755)
	config := filepath.Join(dir, "mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers":{"bad":{"command":"`+script+`"}}}`), 0o600)
	status, stdout, stderr := runBinary(t, nil, "", "probe", "--config", config, "--ledger", "off")
	if status != 78 || !strings.Contains(stdout+stderr, "/nonexistent/node") {
		t.Errorf("probe of a script with a missing interpreter: status %d, output:\n%s%s\nwant 78 and the interpreter named", status, stdout, stderr)
	}
}

// TestReviewLongLastAnswerWithoutNewlineSettles: a server whose last answer is
// longer than the hold (streamed), written id last without a newline before it
// exits, has answered: the shim must not answer the request a second time.
func TestReviewLongLastAnswerWithoutNewlineSettles(t *testing.T) {
	script := `read l; printf '{"jsonrpc":"2.0","result":{"t":"'; head -c 3145728 /dev/zero | tr '\0' x; printf '"},"id":2}'; exit 1`
	out := runScript(t, []string{"--restart", "never"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n", script)
	if n, lines := answersTo(out, "2"); n != 1 {
		t.Fatalf("client read %d answers to id 2, want 1: %q", n, lines)
	}
}

// TestReviewRunnerRestartedThenLeft: a package runner that crashed after its
// handshake is restarted, and the shim's replayed initialize is answered: its
// install is over. When the client then leaves, the ordinary ladder runs
// (stdin closed, --kill-grace, SIGTERM), not InstallGrace's two minutes.
// The stand-in `npx` crashes on its first call and ignores stdin's EOF.
func TestReviewRunnerRestartedThenLeft(t *testing.T) {
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	os.WriteFile(npx, []byte(`#!/bin/sh
mark=$1
while IFS= read -r l; do
  id=$(printf '%s' "$l" | sed -n 's/.*"id":\([^,}]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$l" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}\n' "$id";;
  *) if [ ! -e "$mark" ]; then : > "$mark"; exit 1; fi; printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id";;
  esac
done
exec sleep 300
`), 0o755)
	s := start(t, true, []string{"--kill-grace", "100ms"}, npx, filepath.Join(dir, "crashed"))
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := s.call("2", "tools/call", `{"name":"a"}`); !strings.Contains(got, "-31000") {
		t.Fatalf("tools/call on a crashing server: got %s, want the shim's -31000 error", got)
	}
	waitEvent(t, s.ledger, "handshake_replayed", eventWait)
	s.stdin.Close()
	k := waitEvent(t, s.ledger, "kill_requested", eventWait)
	if r := k.Str("reason"); k.Str("signal") != "SIGTERM" || !strings.Contains(r, "100ms") {
		t.Errorf("kill_requested %s (%s), want SIGTERM after --kill-grace 100ms", k.Str("signal"), r)
	}
	s.finish()
}
