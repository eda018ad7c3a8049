package supervisor

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// startGuard launches a guard process that kills the child's process group
// when the shim dies, whatever kills it: the guard reads a pipe whose only
// writer is the shim, and the kernel closes it when the shim is gone. This
// covers what Pdeathsig cannot: grandchildren (npx, uvx) and darwin.
// The returned file is the shim's end; closing it releases the guard.
func startGuard(argv []string, pgid int) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], append(argv[1:], strconv.Itoa(pgid))...)
	cmd.Stdin = r
	// Its own group: a client that kills the shim's group must not take the guard with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	// Reap it when it is done; nobody waits on its status.
	go cmd.Wait()
	return w, nil
}

// RunGuard is the guard process's main: it waits for EOF on stdin (the shim
// closed its end or died), then kills the process group pgid.
func RunGuard(stdin io.Reader, pgid int) int {
	if pgid <= 1 {
		return 2
	}
	_, _ = io.Copy(io.Discard, stdin)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return 0
}
