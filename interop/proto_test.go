//go:build !windows

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

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// TestModernRestartOwnRequestsAccepted: after the official Go SDK server is
// killed in a 2026-07-28 session, the shim's own tools/list to the restarted
// server carries every required _meta field; go-sdk rejects one that lacks
// them with -32602 ("A request missing any required field is malformed").
// A recording tee in front of each server run shows what it answered.
func TestModernRestartOwnRequestsAccepted(t *testing.T) {
	dir := t.TempDir()
	lpath := filepath.Join(dir, "ledger.jsonl")
	cmd := exec.Command(bins.shim, "--name", "gosdk", "--ledger", lpath, "--backoff", "10ms", "--",
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
		for _, e := range readLedgerIfAny(lpath) {
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
	// Sent once the shim has seen the death (before it, the request could
	// reach the dying child and be answered with the shim's error, as it
	// should), then held until the restarted server took the session back
	// (the replay and the shim's own tools/list come first).
	for scheduled := false; !scheduled && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		for _, e := range readLedgerIfAny(lpath) {
			scheduled = scheduled || e.Event == "restart_scheduled"
		}
	}
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
		t.Fatalf("no answer to a request of the shim's own in %v; events:%s", outs, eventList(readLedgerIfAny(lpath)))
	}
}

// readLedgerIfAny reads the ledger as far as it is written; nothing yet is no error.
func readLedgerIfAny(path string) []ledger.Entry {
	data, _ := os.ReadFile(path)
	var out []ledger.Entry
	for _, line := range strings.Split(string(data), "\n") {
		if e, err := ledger.Decode([]byte(line)); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// TestRealPeersLongAnswersReSpelledIDs: the TypeScript SDK (server-everything)
// writes the id after the result and re-spells it through JSON.parse and
// JSON.stringify; Python's json.dumps re-spells it too. A 3 MiB answer to a
// re-spelled id is one answer, the call's, and nothing is owed at exit.
func TestRealPeersLongAnswersReSpelledIDs(t *testing.T) {
	for _, srv := range servers {
		if srv.name != "everything" && srv.name != "python" {
			continue
		}
		t.Run(srv.name, func(t *testing.T) {
			need(t, srv.needs)
			dir := t.TempDir()
			run := srv.start(t, dir)
			lpath := filepath.Join(dir, "ledger.jsonl")
			cmd := exec.Command(bins.shim, append([]string{"--name", srv.name, "--ledger", lpath, "--restart", "never", "--"}, run.argv...)...)
			cmd.Env = append(os.Environ(), run.env...)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			c := testfixtures.NewClient(stdin, stdout)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := c.Call(ctx, "1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}`); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			ids := []string{`"\u00e9-big"`, `"a\/b"`, `2.0`}
			big := strings.Repeat("x", 3<<20)
			for _, raw := range ids {
				c.Send(`{"jsonrpc":"2.0","id":` + raw + `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + big + `"}}}`)
			}
			stdin.Close()
			got := map[mcp.ID]int{}
			var lines []string
			for {
				line, err := c.ReadLine(ctx)
				if m := mcp.Peek(line); m.IsResponse() {
					got[m.ID]++
					lines = append(lines, string(line[:min(len(line), 120)]))
				}
				if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
					break
				}
			}
			_ = cmd.Wait()
			for _, raw := range ids {
				id, _ := mcp.ParseID([]byte(raw))
				if got[id] != 1 {
					t.Errorf("id %s got %d answers, want 1; answers: %q", raw, got[id], lines)
				}
			}
			entries := readLedgerIfAny(lpath)
			n := 0
			for _, e := range entries {
				switch e.Event {
				case "stdout_noise", "pending_failed", "unknown_response":
					t.Errorf("%s in the ledger for %s", e.Event, e.Str("request_id"))
				case "tool_call_responded":
					n++
				}
			}
			if n != len(ids) {
				t.Errorf("%d calls recorded answered, want %d; events:%s", n, len(ids), eventList(entries))
			}
		})
	}
}
