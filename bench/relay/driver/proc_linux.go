package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// procStatus reads one kB field of /proc/PID/status, in bytes: VmHWM (the
// high-water resident set, of the process alone, unlike wait4's Maxrss,
// which counts its reaped children) or VmRSS.
func procStatus(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("%s of %d: %w", key, pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte(key)); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s of %d: %w", key, pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s of %d: not in /proc/%d/status", key, pid, pid)
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
