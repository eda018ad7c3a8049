package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// peakRSS is not available without /proc; the caller falls back to maxRSS.
func peakRSS(pid int) (int64, error) {
	return 0, fmt.Errorf("peak rss of %d: %w", pid, errors.ErrUnsupported)
}

// cpuTime is not available without /proc; the report leaves it out.
func cpuTime(pid int) (time.Duration, error) {
	return 0, fmt.Errorf("cpu time of %d: %w", pid, errors.ErrUnsupported)
}

// maxRSS is wait4's Maxrss in bytes (darwin reports bytes).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}

// loadAvg is not read on darwin.
func loadAvg() string { return "?" }
