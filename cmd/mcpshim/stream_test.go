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
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
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
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
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

// TestClientTailDelivered: the client's last bytes without a newline reach
// the server at a clean end of stream, even when they arrive before it started.
func TestClientTailDelivered(t *testing.T) {
	out := filepath.Join(t.TempDir(), "got")
	cmd, _ := shimCmd(t, nil, "sh", "-c", `cat > "$0"`, out)
	cmd.Stdin = strings.NewReader("x\nclient tail")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shim: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	if want := "x\nclient tail"; string(got) != want {
		t.Errorf("server got %q, want %q", got, want)
	}
}

// TestServerTailDelivered: a last server line without newline reaches the
// client when the server exits cleanly and the shim writes nothing after it.
func TestServerTailDelivered(t *testing.T) {
	cmd, lpath := shimCmd(t, nil, "sh", "-c", `printf 'a\nserver tail'`)
	cmd.Stdin = strings.NewReader("")
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("shim: %v", err)
	}
	if want := "a\nserver tail"; string(got) != want {
		t.Errorf("client got %q, want %q", got, want)
	}
	if e := find(readLedger(t, lpath), phases.PartialLineDropped); e != nil {
		t.Errorf("a delivered tail is recorded %s: %v", e.Event, e.Fields)
	}
}

// TestStartupBackpressure: a client that writes thousands of lines before
// the server reads loses none of them: the shim stops reading instead.
func TestStartupBackpressure(t *testing.T) {
	const n = 5000
	out := filepath.Join(t.TempDir(), "got")
	cmd, lpath := shimCmd(t, nil, "sh", "-c", `sleep 1; exec cat > "$0"`, out)
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"notifications/message","params":{"i":%d}}`+"\n", i)
	}
	cmd.Stdin = strings.NewReader(in.String())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shim: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	if string(got) != in.String() {
		t.Errorf("server got %d lines (%d bytes), want %d lines (%d bytes)", strings.Count(string(got), "\n"), len(got), n, in.Len())
	}
	if e := find(readLedger(t, lpath), phases.MessageRejected); e != nil {
		t.Errorf("got %s %v, want nothing rejected", e.Event, e.Fields)
	}
}

// TestHeldRequestRecordedFirst: requests held while the server starts are
// recorded before their answers.
func TestHeldRequestRecordedFirst(t *testing.T) {
	bin := builtShim(t)
	cmd, lpath := shimCmd(t, []string{"--restart", "never"}, "sh", "-c", `sleep 0.3; exec "$0" fixture healthy`, bin)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":` + initParams + `}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, in.String())
	// Close stdin only when every answer arrived: the shim stops the server at EOF.
	br := bufio.NewReader(stdout)
	for seen := 0; seen < 201; seen++ {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("after %d answers: %v", seen, err)
		}
	}
	stdin.Close()
	io.Copy(io.Discard, br)
	cmd.Wait()
	received := map[string]bool{}
	for _, e := range readLedger(t, lpath) {
		id := fmt.Sprint(e.Fields["request_id"])
		switch e.Event {
		case phases.RequestReceived, phases.InitializeReceived:
			received[id] = true
		case phases.RequestResponded, phases.InitializeResponded:
			if !received[id] {
				t.Fatalf("request %s: %s recorded before its request (seq %d)", id, e.Event, e.Seq)
			}
		}
	}
}

// TestErrorsPromptWithGrandchild: the in-flight request gets its error soon
// after the server exits, while a grandchild that left the process group
// still writes to the dead server's stdout.
func TestErrorsPromptWithGrandchild(t *testing.T) {
	dir := t.TempDir()
	done, pidFile := filepath.Join(dir, "done"), filepath.Join(dir, "pid")
	// The grandchild writes for a minute; it ignores SIGPIPE, so it outlives
	// the shim closing the pipe, and says when it stops.
	script := `read line
setsid sh -c 'trap "" PIPE; echo $$ > "$1"; i=0; while [ $i -lt 3000 ]; do echo "noise $i" 2>/dev/null; sleep 0.02; i=$((i+1)); done; touch "$2"' grandchild "$0" "$1" &
sleep 0.2
exit 3`
	cmd, _ := shimCmd(t, []string{"--restart", "never"}, "sh", "-c", script, pidFile, done)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`+"\n")
	lines := make(chan string)
	go func() {
		br := bufio.NewReader(stdout)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	deadline := time.After(50 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the shim's stdout ended without an answer for id 7")
			}
			if m := mcp.Peek([]byte(l)); m.Kind == mcp.ErrorResponse && string(m.RawID) == "7" {
				if _, err := os.Stat(done); err == nil {
					t.Fatal("the error for id 7 arrived after the grandchild stopped writing, want it at the server's exit")
				}
				stdin.Close()
				return
			}
		case <-deadline:
			t.Fatal("no answer for id 7 within 50 s")
		}
	}
}

// TestServerStderrLongLineWhole: a server stderr line longer than the
// reader's buffer reaches the log whole, with the shim's event lines (here
// the stdout_noise the server provokes halfway) before or after it.
func TestServerStderrLongLineWhole(t *testing.T) {
	const half = 100000
	script := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a >&2; echo noise; sleep 0.5; head -c %d /dev/zero | tr '\0' a >&2; echo >&2`, half, half)
	cmd, _ := shimCmd(t, []string{"--restart", "never"}, "sh", "-c", script)
	cmd.Stdin = strings.NewReader("")
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("shim: %v\n%s", err, stderr.String())
	}
	log := stderr.String()
	// The line may open the log: the shim's first event lines can follow it.
	if !strings.Contains("\n"+log, "\n"+strings.Repeat("a", 2*half)+"\n") {
		i := strings.Index(log, "a")
		t.Errorf("the %d-byte stderr line is not whole in the log; around its start: %q", 2*half, log[max(0, i-200):min(len(log), i+300)])
	}
	if !strings.Contains(log, "stdout_noise") {
		t.Errorf("no stdout_noise event in the log")
	}
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
