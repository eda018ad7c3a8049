//go:build !windows

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

func TestSpawnFailures(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "server.sh")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	cases := []struct {
		argv   []string
		status int
		class  string
	}{
		{[]string{"no-such-mcp-server-xyz"}, 127, "not_found"},
		{[]string{"/nonexistent/bin/server"}, 127, "not_found"},
		{[]string{notExec}, 126, "permission"},
	}
	for _, c := range cases {
		s := start(t, true, nil, c.argv...)
		if got := s.finish(); got != c.status {
			t.Errorf("%v: exit status %d, want %d", c.argv, got, c.status)
		}
		sf := find(s.entries(), "spawn_failed")
		if sf == nil || sf.Str("error_class") != c.class || sf.Str("hint") == "" {
			t.Errorf("%v: spawn_failed = %+v, want class %s with a hint", c.argv, sf, c.class)
		}
	}
}

// TestLastAnswerWithoutNewlineSettles: a server that writes its last answer
// without a newline and exits: the client gets that answer once, not also
// the shim's error for it.
func TestLastAnswerWithoutNewlineSettles(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "sh", "-c",
		`read l; printf '%s' '{"jsonrpc":"2.0","id":2,"result":{}}'; exit 1`)
	s.client.Send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	s.stdin.Close()
	var lines []string
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	for {
		l, err := s.client.ReadLine(ctx)
		if len(l) > 0 {
			lines = append(lines, string(l))
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
			break
		}
	}
	if len(lines) != 1 || lines[0] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("client read %q, want only the server's answer", lines)
	}
	s.finish()
	if find(s.entries(), "pending_failed") != nil {
		t.Errorf("the shim answered a request the server had answered")
	}
}

// TestGrandchildIsReaped: a grandchild holding stdout does not keep the shim
// alive, and is killed with the group.
func TestGrandchildIsReaped(t *testing.T) {
	s := start(t, true, nil, "fixture", "grandchild")
	s.call("1", "initialize", initParams)
	pgid := waitEvent(t, s.ledger, "spawned", eventWait).PID
	s.finish()
	if left := groupMembers(pgid); len(left) > 0 {
		t.Fatalf("process group %d still has live members %v after the shim exited", pgid, left)
	}
}

// groupMembers lists the live (not zombie) processes of a process group:
// a killed orphan stays a zombie until PID 1 reaps it.
func groupMembers(pgid int) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		rest := stat[bytes.LastIndexByte(stat, ')')+2:]
		f := strings.Fields(string(rest))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, d.Name())
		}
	}
	return out
}
