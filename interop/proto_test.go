package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// TestModernRestartOwnRequestsAccepted: after the official Go SDK server is
// killed in a 2026-07-28 session, the shim's own tools/list to the restarted
// server carries every required _meta field; go-sdk rejects one that lacks
// them with -32602 ("A request missing any required field is malformed").
// A recording tee in front of each server run shows what it answered.
func TestModernRestartOwnRequestsAccepted(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.jsonl")
	cmd := exec.Command(bins.shim, "--name", "gosdk", "--ledger", ledger, "--backoff", "10ms", "--",
		"sh", "-c", `exec "$0" `+teeArg+` "$1.$$" -- "$2"`, bins.self, filepath.Join(dir, "server"), bins.gosdkServer)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c := testfixtures.NewClient(stdin, stdout)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"interop","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if _, err := c.Call(ctx, "1", "tools/list", `{`+meta+`}`); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var pid int
	for pid == 0 && ctx.Err() == nil {
		for _, e := range readLedgerIfAny(ledger) {
			if e.Event == "spawned" {
				pid = e.PID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid <= 1 {
		t.Fatalf("no spawned pid in the ledger")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Held until the restarted server took the session back (the replay and
	// the shim's own tools/list come first).
	if _, err := c.Call(ctx, "2", "tools/list", `{`+meta+`}`); err != nil {
		t.Fatalf("tools/list after the restart: %v", err)
	}
	stdin.Close()
	for {
		if _, err := c.ReadLine(ctx); err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
			break
		}
	}
	_ = cmd.Wait()

	outs, _ := filepath.Glob(filepath.Join(dir, "server.*.out"))
	own := 0
	for _, f := range outs {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			m := mcp.Peek([]byte(line))
			if !m.IsResponse() || !mcp.IsOwnID(m.ID) {
				continue
			}
			own++
			if m.Kind == mcp.ErrorResponse {
				t.Errorf("the restarted go-sdk server refused the shim's own request: %s", line)
			}
		}
	}
	if own == 0 {
		t.Fatalf("no answer to a request of the shim's own in %v; events:%s", outs, eventList(readLedgerIfAny(ledger)))
	}
}

// readLedgerIfAny reads the ledger as far as it is written; nothing yet is no error.
func readLedgerIfAny(path string) []phases.Entry {
	data, _ := os.ReadFile(path)
	var out []phases.Entry
	for _, line := range strings.Split(string(data), "\n") {
		if e, err := phases.Decode([]byte(line)); err == nil {
			out = append(out, e)
		}
	}
	return out
}
