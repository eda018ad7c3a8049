package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// OOM follows the OOM kills of a process's memory cgroup: a server killed
// by SIGKILL that the shim did not send was often killed by the OOM killer,
// and the cgroup's count says so. Its zero value reads nothing.
type OOM struct {
	File   string // the cgroup file that counts the kills; "" when unreadable
	Before int64  // its oom_kill count when the process started
	Err    error  // why the count is unreadable
}

// WatchOOM reads pid's memory cgroup's OOM kill count now, while the
// process lives (its cgroup is read from /proc/PID/cgroup).
func WatchOOM(pid int) OOM {
	file, err := oomFile(pid)
	if err != nil {
		return OOM{Err: err}
	}
	n, err := readOOMKills(file)
	if err != nil {
		return OOM{Err: err}
	}
	return OOM{File: file, Before: n}
}

// Kills is how many OOM kills the cgroup counted since WatchOOM.
func (o OOM) Kills() (int64, error) {
	if o.Err != nil {
		return 0, o.Err
	}
	n, err := readOOMKills(o.File)
	if err != nil {
		return 0, err
	}
	return n - o.Before, nil
}

// readOOMKills reads the oom_kill line of cgroup v2's memory.events or
// cgroup v1's memory.oom_control.
func readOOMKills(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("oom_kill ")); ok {
			return strconv.ParseInt(string(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no oom_kill count (a kernel before 4.13)", file)
}
