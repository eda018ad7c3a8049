package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToolsChangedAfterRestart: the restarted server offers other tools; the
// shim tells the client and records what was added and removed.
func TestToolsChangedAfterRestart(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "tools")
	os.WriteFile(tools, []byte("echo,add"), 0o600)
	s := start(t, true, []string{"--backoff", "10ms"}, "fixture", "healthy", "--crash-on-call", "1", "--tools", "@"+tools)
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", `{}`)
	os.WriteFile(tools, []byte("echo,search"), 0o600)
	s.call("3", "tools/call", `{"name":"echo","arguments":{"text":"x"}}`) // dies; the restart reads the new list
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	for {
		line, err := s.client.ReadLine(ctx)
		if err != nil && len(line) == 0 {
			t.Fatalf("no notifications/tools/list_changed: %v", err)
		}
		if strings.Contains(string(line), `"notifications/tools/list_changed"`) {
			break
		}
	}
	s.finish()
	ch := find(s.entries(), "tools_changed_after_restart")
	if ch == nil || fmt.Sprint(ch.Strs("added")) != "[search]" || fmt.Sprint(ch.Strs("removed")) != "[add]" {
		t.Fatalf("tools_changed_after_restart = %+v, want added [search] removed [add]", ch)
	}
}

// TestClientStdoutClosed: a client that vanishes (its read end closed) does
// not kill the shim silently with SIGPIPE: it is recorded and the server stopped.
func TestClientStdoutClosed(t *testing.T) {
	bin := builtShim(t)
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	cmd := exec.Command(bin, "--ledger", ledger, "--kill-grace", "200ms", "--", bin, "fixture", "stderr-chatty")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the client is gone
	for i := range 3 {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(eventWait):
		cmd.Process.Kill()
		t.Fatal("the shim did not end after its client vanished")
	}
	stdin.Close()
	data, _ := os.ReadFile(ledger)
	if !bytes.Contains(data, []byte(`"reason":"stdout_closed"`)) {
		t.Fatalf("no client_disconnected stdout_closed in the ledger:\n%s", data)
	}
}

func waitOrKill(t *testing.T, cmd *exec.Cmd, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s did not end within %v", cmd.Path, d)
	}
}

// TestLockEnforce: seed 003's report server without its token lists no
// tools. In warn mode the session goes on with tools_missing recorded; in
// enforce mode the client gets an error for tools/list and the shim exits 78.
func TestLockEnforce(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	os.WriteFile(lock, []byte(`{"version":1,"servers":{"test":{
		"fetch_daily_report":{"digest":"sha256/v1:00","shape":"sha256/v1:00"},
		"list_report_dates":{"digest":"sha256/v1:11","shape":"sha256/v1:11"}}}}`), 0o600)
	for _, mode := range []string{"warn", "enforce"} {
		s := start(t, true, []string{"--lock", lock, "--lock-mode", mode}, "fixture", "report")
		s.call("1", "initialize", initParams)
		s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		list := s.call("2", "tools/list", `{}`)
		status := s.finish()
		missing := find(s.entries(), "tools_missing")
		if missing == nil || fmt.Sprint(missing.Strs("missing")) != "[fetch_daily_report list_report_dates]" {
			t.Errorf("%s: tools_missing = %+v, want both report tools", mode, missing)
		}
		switch mode {
		case "warn":
			if !strings.Contains(list, `"tools":[]`) || status != 0 {
				t.Errorf("warn: got %s and status %d, want the empty list and 0", list, status)
			}
		case "enforce":
			if !strings.Contains(list, `"error"`) || !strings.Contains(list, "fetch_daily_report") || status != 78 {
				t.Errorf("enforce: got %s and status %d, want an error naming the tools and 78", list, status)
			}
		}
		if !strings.Contains(s.stderr.String(), "fetch_daily_report, list_report_dates") {
			t.Errorf("%s: missing names not on stderr:\n%s", mode, s.stderr.String())
		}
	}
}
