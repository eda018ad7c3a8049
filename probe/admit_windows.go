package probe

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// cpuGauge reads whether the process trees of alive servers keep a CPU busy,
// from their processes' CPU times (GetProcessTimes) and their parents
// (a Toolhelp snapshot). It remembers each tree's CPU time from the last
// reading. Windows shows no run queue as /proc's R state does: a tree is
// running when its CPU time grew since the last reading.
type cpuGauge struct {
	last map[int]time.Duration // leader pid -> its tree's CPU time
}

func newCPUGauge() *cpuGauge { return &cpuGauge{last: map[int]time.Duration{}} }

// proctimes is what GetProcessTimes says of one process.
type proctimes struct {
	created int64 // 100 ns since 1601
	cpu     time.Duration
}

func times(pid uint32) (proctimes, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return proctimes{}, false
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return proctimes{}, false
	}
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil || code != 259 { // STILL_ACTIVE
		return proctimes{}, false
	}
	ns := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return proctimes{created: ns(created), cpu: time.Duration(ns(kernel)+ns(user)) * 100}, true
}

// read finds, for each server by the pid of its leader, its tree's CPU time
// and whether it grew since the last reading. A server whose leader has
// exited is left out. ok is false when the processes cannot be listed.
func (g *cpuGauge) read(pids []int) (map[int]usage, bool) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, false
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]uint32{}
	pe := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		children[pe.ParentProcessID] = append(children[pe.ParentProcessID], pe.ProcessID)
	}
	seen := make(map[int]time.Duration, len(pids))
	out := make(map[int]usage, len(pids))
	for _, pid := range pids {
		leader, ok := times(uint32(pid))
		if !ok {
			continue
		}
		u := usage{cpu: leader.cpu}
		type node struct {
			pid     uint32
			created int64
		}
		stack := []node{{uint32(pid), leader.created}}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range children[n.pid] {
				// A parent pid outlives its process: a child created before
				// it is another process's that took the pid over.
				if t, ok := times(c); ok && t.created >= n.created {
					u.cpu += t.cpu
					stack = append(stack, node{c, t.created})
				}
			}
		}
		prev, known := g.last[pid]
		u.running = !known || u.cpu > prev
		seen[pid] = u.cpu
		out[pid] = u
	}
	g.last = seen
	return out, true
}
