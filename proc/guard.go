package proc

import (
	"bytes"
	"io"
	"os"
	"os/exec"
)

// startGuard starts the guard cmd with a pipe on its stdin and returns the
// shim's end: closing it, or the shim's death, releases the guard.
func startGuard(cmd *exec.Cmd) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	// The reaper: nobody waits on the guard's status. Returns when the guard
	// exits, after the shim closed its pipe (or died) and the group was
	// killed.
	go cmd.Wait()
	return w, nil
}

// waitRelease reads the guard's stdin until it ends (the shim closed its
// end or died) and reports whether the shim wrote GuardReady before.
func waitRelease(stdin io.Reader) (ready bool) {
	buf := make([]byte, 64)
	for {
		n, err := stdin.Read(buf)
		ready = ready || bytes.IndexByte(buf[:n], GuardReady) >= 0
		if err != nil {
			return ready
		}
	}
}
