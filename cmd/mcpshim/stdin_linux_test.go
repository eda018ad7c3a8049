package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStdinHeldByGrandchild: the child leaves a grandchild holding its stdin
// that never reads it, and dies while the client relay is blocked writing a
// long request into that full pipe. The shim used to hang for good: the
// relay's write held the stdin switch's lock, which the loop needed before
// it could kill the group. Now the child's stdin is closed when it is
// reaped: the write fails, the request is answered, the group is killed and
// the shim exits with the child's status.
func TestStdinHeldByGrandchild(t *testing.T) {
	s := start(t, true, []string{"--restart", "never"}, "sh", "-c",
		`exec 3<&0; sleep 1000 <&3 3<&- >/dev/null 2>&1 & exec 3<&-; exec sleep 1000`)
	spawned := waitEvent(t, s.ledger, "spawned", eventWait)
	pid := spawned.PID
	// The child's stdin, opened through /proc to see how full it is.
	pipe, err := os.Open(fmt.Sprintf("/proc/%d/fd/0", pid))
	if err != nil {
		t.Fatalf("open the child's stdin: %v", err)
	}
	defer pipe.Close()
	capacity, err := unix.FcntlInt(pipe.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatalf("F_GETPIPE_SZ: %v", err)
	}
	// A request far longer than the pipes and the relay hold (1 MiB held,
	// then streamed).
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("x", 8<<20) + `"}}}` + "\n"
	// The client's writer: returns when the request is written, or when the
	// shim's stdin is closed.
	go func() {
		for n := 0; n < len(body); {
			k, err := s.stdin.Write([]byte(body[n:min(n+64<<10, len(body))]))
			n += k
			if err != nil {
				return
			}
		}
	}()
	// A full pipe: the relay is blocked writing the rest of the held MiB.
	waitFor(t, "the child's stdin to fill", eventWait, func() bool {
		n, err := unix.IoctlGetInt(int(pipe.Fd()), unix.TIOCINQ) // FIONREAD
		return err == nil && n >= capacity
	})
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatalf("kill the child %d: %v", pid, err)
	}
	lines := s.readToEOF()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"error":`) {
		t.Fatalf("got %q, want one error for the request", lines)
	}
	if got := s.finish(); got != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status %d, want %d (the child's)", got, 128+int(syscall.SIGKILL))
	}
}
