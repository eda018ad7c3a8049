package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// shimCmd is the built shim in front of argv, with a ledger in a temp dir.
func shimCmd(t *testing.T, flags []string, argv ...string) (*exec.Cmd, string) {
	t.Helper()
	lpath := filepath.Join(t.TempDir(), "ledger.jsonl")
	args := append([]string{"--name", "test", "--ledger", lpath}, flags...)
	cmd := exec.Command(builtShim(t), append(append(args, "--"), argv...)...)
	cmd.Env = os.Environ()
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, lpath
}

func readLedger(t *testing.T, path string) []ledger.Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read ledger: %v", err)
	}
	var out []ledger.Entry
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		e, err := ledger.Decode([]byte(line))
		if err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestStreamPropertyOneAnswerEach: a server that answers in any order, with
// either key order and results up to 2 MiB, and dies now and then (sometimes
// in the middle of an answer) while the client keeps sending requests: every
// request gets exactly one answer, and the client never reads a line that is
// not one whole JSON value.
func TestStreamPropertyOneAnswerEach(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server many times")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the flaky server")
	}
	for seed := 1; seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { streamProperty(t, seed) })
	}
}

func streamProperty(t *testing.T, seed int) {
	const requests = 300
	server, _ := filepath.Abs("testdata/stream/flaky_server.py")
	cmd, lpath := shimCmd(t, []string{"--max-restarts", "1000", "--backoff", "1ms", "--backoff-max", "5ms", "--quiet"},
		"python3", server, fmt.Sprint(seed))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards answers and bad
	answers := map[string]int{}
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			mu.Lock()
			if len(line) > 0 && err == nil {
				m := mcp.Peek(line)
				switch {
				case !mcp.Valid(line):
					bad = append(bad, fmt.Sprintf("%.80q", line))
				case m.IsResponse():
					answers[string(m.RawID)]++
				}
			}
			if err != nil && len(line) > 0 {
				bad = append(bad, fmt.Sprintf("unterminated %.80q", line))
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":`+initParams+`}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	// Waves of requests, each waited for (asking the server for what it
	// deferred), so that the server dies in many of them.
	deadline := time.Now().Add(90 * time.Second)
	for i := 1; i <= requests; i++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"i":%d}}}`+"\n", i, i)
		if i%7 == 0 {
			io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`+"\n")
		}
		for i%30 == 0 || i == requests {
			mu.Lock()
			n := len(answers)
			mu.Unlock()
			if n >= i+1 || time.Now().After(deadline) {
				break
			}
			io.WriteString(stdin, `{"jsonrpc":"2.0","method":"flush"}`+"\n")
			time.Sleep(50 * time.Millisecond)
		}
	}
	stdin.Close()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		t.Fatal("the shim's stdout did not end within 120 s")
	}
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	restarts := 0
	for _, e := range readLedger(t, lpath) {
		if e.Event == phases.RestartScheduled {
			restarts++
		}
	}
	t.Logf("seed %d: %d restarts", seed, restarts)
	if restarts == 0 {
		count := map[string]int{}
		for _, e := range readLedger(t, lpath) {
			count[e.Event]++
		}
		t.Logf("events: %v", count)
	}
	if len(bad) > 0 {
		t.Errorf("the client read %d lines that are not one JSON value, first %s", len(bad), bad[0])
	}
	for i := 0; i <= requests; i++ {
		if n := answers[strconv.Itoa(i)]; n != 1 {
			t.Errorf("request %d got %d answers, want 1", i, n)
		}
		delete(answers, strconv.Itoa(i))
	}
	if len(answers) > 0 {
		t.Errorf("answers for ids never sent: %v", answers)
	}
}

// TestHoldAcrossRestartBounded: while no server process runs (a restart
// delay), client lines are held up to the bound; past it a request gets an
// error at once and every other line is recorded as message_rejected.
func TestHoldAcrossRestartBounded(t *testing.T) {
	s := start(t, true, []string{"--backoff", "30s", "--backoff-max", "30s"}, "fixture", "healthy", "--crash-on-call", "1")
	s.call("1", "initialize", initParams)
	if err := s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	// The first crash is restarted at once, the second after a delay the test
	// does not wait out.
	for _, id := range []string{"2", "3"} {
		if m := mcp.Peek([]byte(s.call(id, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`))); m.Kind != mcp.ErrorResponse {
			t.Fatalf("call %s: got %v, want the shim's error for a crashed server", id, m.Kind)
		}
	}
	const extra = 50
	for i := range 1024 + extra {
		if err := s.client.Send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if m := mcp.Peek([]byte(s.call("4", "ping", `{}`))); m.Kind != mcp.ErrorResponse {
		t.Fatalf("a request past the bound: got %v, want an error", m.Kind)
	}
	s.finish()
	rejected := 0
	for _, e := range s.entries() {
		if e.Event == phases.MessageRejected {
			rejected++
		}
	}
	if rejected != extra {
		t.Errorf("got %d message_rejected, want %d (one per line past the bound)", rejected, extra)
	}
}
