//go:build !linux

package main

import (
	"errors"
	"fmt"
	"time"
)

// procStatus is not available without /proc; the report leaves it out.
func procStatus(pid int, key string) (int64, error) {
	return 0, fmt.Errorf("%s of %d: %w", key, pid, errors.ErrUnsupported)
}

// cpuTime is not available without /proc; the report leaves it out.
func cpuTime(pid int) (time.Duration, error) {
	return 0, fmt.Errorf("cpu time of %d: %w", pid, errors.ErrUnsupported)
}

// loadAvg is read on Linux only.
func loadAvg() string { return "?" }
