package probe

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// cpuGauge reads from /proc whether the process trees of alive servers keep
// a CPU busy. It remembers each process's CPU time from the last reading.
type cpuGauge struct {
	last map[int]uint64 // pid -> utime+stime in clock ticks
}

func newCPUGauge() *cpuGauge { return &cpuGauge{last: map[int]uint64{}} }

// read finds, for each server by the pid of its leader, whether some
// process of its tree used CPU time since the last reading or has a thread
// running or waiting for the CPU or the disk (state R or D), and the tree's
// CPU time. The state catches a start starved by other work, whose CPU time
// grows by the clock tick (10 ms) at best once in several readings. A
// server whose leader has exited is left out. ok is false when /proc cannot
// be read.
func (g *cpuGauge) read(pids []int) (map[int]usage, bool) {
	seen := make(map[int]uint64, len(g.last))
	out := make(map[int]usage, len(pids))
	for _, pid := range pids {
		var u usage
		found := false // the leader, alive
		stack := []int{pid}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			state, cpu, err := readStat("/proc/" + strconv.Itoa(p) + "/stat")
			if err != nil {
				if p == pid && !os.IsNotExist(err) {
					return nil, false
				}
				continue // gone since its parent listed it
			}
			if state == 'Z' || state == 'X' {
				continue // exited: its CPU times read 0 until it is reaped
			}
			found = found || p == pid
			prev, known := g.last[p]
			seen[p] = cpu
			u.cpu += time.Duration(cpu) * clockTick
			u.running = u.running || running(state) || (known && cpu > prev) || threadRunning(p)
			stack = append(stack, children(p)...)
		}
		if found {
			out[pid] = u
		}
	}
	g.last = seen
	return out, true
}

// clockTick is the unit of /proc's CPU times, USER_HZ: 100 on every Linux.
const clockTick = 10 * time.Millisecond

func running(state byte) bool { return state == 'R' || state == 'D' }

// threadRunning reports whether a thread of pid other than the main one is
// running: a Go server's goroutines move between threads, and the process's
// state is its main thread's.
func threadRunning(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tids, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, tid := range tids {
		if state, _, err := readStat(dir + tid.Name() + "/stat"); err == nil && running(state) {
			return true
		}
	}
	return false
}

// readStat reads the state and utime+stime of a process or thread from its
// stat file.
func readStat(path string) (state byte, cpu uint64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, os.ErrInvalid
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 13 {
		return 0, 0, os.ErrInvalid
	}
	utime, _ := strconv.ParseUint(string(f[11]), 10, 64)
	stime, _ := strconv.ParseUint(string(f[12]), 10, 64)
	return f[0][0], utime + stime, nil
}

// children lists the children of pid's main thread, which are the ones a
// server spawns from its event loop (npx's node, uvx's python).
func children(pid int) []int {
	s := strconv.Itoa(pid)
	data, err := os.ReadFile("/proc/" + s + "/task/" + s + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(data) {
		if c, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, c)
		}
	}
	return out
}
