//go:build !windows

package probe

import (
	"syscall"
	"time"
)

// ownCPU is this process's user and system CPU time.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
