//go:build !windows

package probe

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ownCPU is this process's user and system CPU time.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// What the system says for a refused connection, a missing file and a
// command not on PATH.
const (
	refusedText  = "connection refused"
	noSuchFile   = "no such file or directory"
	notOnPathErr = "executable file not found in $PATH"
)

// installExe writes an executable called name into dir, a script doing
// nothing, and returns its path.
func installExe(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// linkSelf makes this test binary runnable as dir/name.
func linkSelf(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Symlink(os.Args[0], filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
