//go:build !windows

package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// StartGuard launches a guard process that kills the child's process group
// when the shim dies, whatever kills it: the guard reads a pipe whose only
// writer is the shim, and the kernel closes it when the shim is gone. This
// covers what Pdeathsig cannot: grandchildren (npx, uvx) and darwin.
// The returned file is the shim's end; closing it releases the guard. A
// grace above zero is for a package runner: see RunGuard.
func StartGuard(argv []string, p *Process, grace time.Duration) (*os.File, error) {
	args := append(argv[1:len(argv):len(argv)], strconv.Itoa(p.Pid))
	if grace > 0 {
		args = append(args, grace.String())
	}
	cmd := exec.Command(argv[0], args...)
	// Its own group: a client that kills the shim's group must not take the guard with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := startGuard(cmd)
	if err == nil {
		// The guard idles until the shim dies; its own start (the shim's
		// whole binary) must not take the CPU the server needs for its
		// first answer. Killing a group later needs next to none.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, guardNice)
	}
	return w, err
}

// guardNice is the guard's nice value: the lowest priority.
const guardNice = 19

// RunGuard is the guard process's main: it waits for EOF on stdin (the shim
// closed its end or died), then kills the process group pgid (the argument
// StartGuard gave it). With a grace,
// the group is a package runner's and, unless the shim wrote that the
// handshake was answered (GuardReady), it may be installing, which no signal
// may interrupt (runner.go): the guard waits up to grace for the group to be
// gone (its stdin, the dead shim's pipe, is closed, so a server it starts
// exits), then sends SIGTERM, and SIGKILL a moment later.
func RunGuard(stdin io.Reader, pgid int, grace time.Duration) int {
	if pgid <= 1 {
		return 2
	}
	ready := waitRelease(stdin)
	if grace > 0 && !ready {
		if groupGone(pgid, grace) {
			return 0
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		if groupGone(pgid, guardTermGrace) {
			return 0
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return 0
}

// guardTermGrace is how long the guard waits after its SIGTERM.
const guardTermGrace = 2 * time.Second

// groupGone waits up to d for process group pgid to have no process left.
func groupGone(pgid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return true
		}
	}
	return false
}
