package main

import (
	"crypto/sha256"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
)

// TestEndToEnd is the acceptance test CI also runs under wine, through
// mcpshim.exe: a server that starts a grandchild; the client's lines
// (multi-byte text, a 3 MiB argument) reach it and its answers (a 3 MiB one
// among them) reach the client with the same bytes as without the shim; the
// ledger holds the session; and after the client's EOF nothing of the
// server's tree is left (a process group on Unix, a job on Windows).
func TestEndToEnd(t *testing.T) {
	big := strings.Repeat("é日🎉x", (3<<20)/10+1) // 3 MiB of UTF-8, 1 to 4 bytes a character
	session := func(s *session) []string {
		return []string{
			s.call("1", "initialize", initParams),
			s.callAfterInitialized("2", "tools/call", `{"name":"echo","arguments":{"text":"héllo wörld — 日本語 🎉 \u00e9"}}`),
			s.call("3", "tools/call", `{"name":"echo","arguments":{"text":"`+big+`"}}`),
			s.call("4", "tools/list", `{}`),
		}
	}

	direct := start(t, false, nil, "fixture", "grandchild")
	want := session(direct)
	if p, err := os.FindProcess(grandchildPID(t, direct)); err == nil {
		p.Kill() // it holds the direct run's stdout open
	}
	direct.finish()

	shimmed := start(t, true, []string{"--name", "e2e"}, "fixture", "grandchild")
	got := session(shimmed)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d through the shim: %d bytes sha256 %x, want %d bytes %x as direct", i+1,
				len(got[i]), sha256.Sum256([]byte(got[i])), len(want[i]), sha256.Sum256([]byte(want[i])))
		}
	}
	if !strings.Contains(got[2], big) {
		t.Errorf("the 3 MiB answer does not hold the 3 MiB argument: the client's bytes did not reach the server whole")
	}
	server := shimmed.waitEvent("spawned").PID
	gc := grandchildPID(t, shimmed)
	if status := shimmed.finish(); status != 0 {
		t.Errorf("shim exit status %d after the client's EOF, want 0; stderr:\n%.2000s", status, shimmed.stderr)
	}

	es := shimmed.entries()
	for _, ev := range []string{"spawned", "initialize_responded", "tools_list_responded", "client_disconnected", "exited"} {
		if find(es, ev) == nil {
			t.Errorf("the ledger has no %s; events %v", ev, events(es))
		}
	}
	var outcomes []string
	for _, e := range es {
		if e.Event == "tool_call_responded" {
			outcomes = append(outcomes, e.Str("outcome"))
		}
	}
	if strings.Join(outcomes, ",") != "success,success" {
		t.Errorf("tool_call_responded outcomes %v, want two successes", outcomes)
	}

	for what, pid := range map[string]int{"server": server, "grandchild": gc} {
		for deadline := time.Now().Add(eventWait); proc.Alive(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("the %s (pid %d) still runs %v after the shim exited", what, pid, eventWait)
				break
			}
		}
	}
}

// callAfterInitialized sends notifications/initialized, then the call.
func (s *session) callAfterInitialized(id, method, params string) string {
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s.call(id, method, params)
}

var grandchildLine = regexp.MustCompile(`grandchild pid=(\d+)`)

// grandchildPID is the pid the grandchild fixture said on its stderr.
func grandchildPID(t *testing.T, s *session) int {
	t.Helper()
	for deadline := time.Now().Add(eventWait); ; time.Sleep(20 * time.Millisecond) {
		if m := grandchildLine.FindStringSubmatch(s.stderr.String()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no grandchild pid on stderr after %v:\n%s", eventWait, s.stderr)
		}
	}
}
