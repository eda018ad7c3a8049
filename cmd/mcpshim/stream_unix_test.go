//go:build !windows

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

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
