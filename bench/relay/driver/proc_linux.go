package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// peakRSS reads the process's high-water resident set (VmHWM) in bytes. Unlike
// wait4's Maxrss it counts the process alone, not its reaped children.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak rss of %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak rss of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("peak rss of %d: no VmHWM in /proc/%d/status", pid, pid)
}

// clockTick is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// mainstream Linux build (reading it needs sysconf, hence cgo).
const clockTick = 10 * time.Millisecond

// cpuTime is the user plus system time the process (all its threads, not its
// children) has used so far, in clock ticks of 10ms.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	// The command name in parentheses may hold spaces; fields count from after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu time of %d: malformed stat %q", pid, b)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu time of %d: malformed stat %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64) // field 14
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu time of %d: malformed stat %q", pid, b)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// maxRSS is wait4's Maxrss in bytes (Linux reports KiB). On Linux it is the
// largest of the process and every descendant it reaped.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// loadAvg is the 1, 5 and 15 minute load averages, for reading the figures
// of a shared machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "?"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
