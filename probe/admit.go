package probe

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Adaptive is the Options.Parallel that starts servers as fast as the CPU
// allows: one per CPU at any time, more while the servers already started
// are not busy starting (silent ones sleep, cheap ones have answered), never
// more than admitCap alive. A cold npx or uvx start is CPU-bound, and
// starting more of them than there are CPUs stretches every one past its
// deadline; a fleet of cheap servers is spawned nearly at once, so every
// deadline starts near the probe's start.
const Adaptive = -1

const (
	// admitCap bounds the servers alive at once under Adaptive: each holds
	// three pipes and a process group.
	admitCap = 128
	// admitTick is how often the alive servers are read while admission
	// waits: long enough for a fresh process to show whether it keeps a CPU
	// busy, short enough that a fleet of cheap servers is spawned within a
	// few ticks.
	admitTick = 20 * time.Millisecond
)

// admitFloor is one server per CPU, 2 to 16.
func admitFloor() int { return min(max(runtime.NumCPU(), 2), 16) }

// heavyCPU is the CPU time past which a start counts as CPU-bound: a cheap
// server (a Go fixture) has answered by then, a cold npx start spends most
// of a second. CPU time is counted in 10 ms clock ticks.
const heavyCPU = 50 * time.Millisecond

// usage is one alive server's process tree as a reading finds it.
type usage struct {
	running bool          // a thread wants the CPU or the disk, or CPU time grew since the last reading
	cpu     time.Duration // CPU time since the spawn
}

// admission is the Adaptive policy, fed with readings of the alive servers
// by the pid of their leader. Below the floor a server is always admitted.
// Past it, each server that finishes starting grants credit to start more,
// paced by the servers themselves rather than a clock: a server settles
// when settleReadings readings in a row find it idle (a silent server
// sleeping on its stdin, a healthy one waiting for the next request) or
// when it ends before that. One found idle grants one start, its
// replacement, so silent servers do not hold the others back yet do not
// multiply an unknown start; a cheap one (under heavyCPU) that ended grants
// two, so a fleet of cheap servers is spawned in a few rounds, as TCP's
// slow start grows; a heavy one that ended is replaced by the floor. A
// reading that finds the floor busy with heavy starts takes the credit back. Whether a runnable
// process is heavy cannot be told from its state on a loaded machine (a
// cheap start waits for the CPU as long as a cold one); its CPU time tells.
// A server started on credit is unknown until it settles, so the credit
// bounds an overshoot.
type admission struct {
	floor, cap int
	credit     int              // servers that may start past the floor
	servers    map[int]*tracked // by pid, from the first reading that found them
	readable   bool             // the last reading was one
	busy       int              // heavy starts in the last reading
}

type tracked struct {
	cpu     time.Duration // at the last reading
	idle    int           // readings in a row that found it idle
	settled bool
}

// settleReadings is how many readings in a row must find a server idle
// before it counts as started: one can catch a start between two bursts
// (a page fault, a thread handing over), and CPU time moves by 10 ms ticks.
const settleReadings = 2

func newAdmission(floor, cap int) *admission {
	return &admission{floor: floor, cap: max(cap, floor), servers: map[int]*tracked{}}
}

// admit reports whether one more server may start while alive are running,
// spending a credit when it starts one past the floor.
func (a *admission) admit(alive int) bool {
	switch {
	case alive >= a.cap:
		return false
	case alive < a.floor:
		return true
	case a.credit > 0:
		a.credit--
		return true
	}
	return false
}

// ended takes the servers that ended, as soon as they do: a cheap start
// that ended before a reading found it idle grants two, unless the last
// reading found the floor busy; a heavy one is replaced by the floor.
// Without readings nothing is known to be cheap.
func (a *admission) ended(pids []int) {
	for _, pid := range pids {
		s := a.servers[pid]
		delete(a.servers, pid)
		if a.readable && a.busy < a.floor && (s == nil || (!s.settled && s.cpu < heavyCPU)) {
			a.credit = min(a.credit+2, a.cap)
		}
	}
}

// observe takes a reading of the alive servers' usage; a server it does not
// find has exited and is taken by ended. ok false is no reading at all (no
// /proc), which grants nothing: the floor is what remains.
func (a *admission) observe(alive map[int]usage, ok bool) {
	if a.readable = ok; !ok {
		a.credit = 0
		return
	}
	busy := 0
	for pid, u := range alive {
		s := a.servers[pid]
		if s == nil {
			s = &tracked{}
			a.servers[pid] = s
		}
		if s.settled {
			continue
		}
		s.cpu = max(s.cpu, u.cpu)
		if u.running {
			s.idle = 0
			if s.cpu >= heavyCPU {
				busy++
			}
			continue
		}
		if s.idle++; s.idle < settleReadings {
			continue
		}
		s.settled = true
		a.credit++ // its replacement: an idle server holds no CPU
	}
	if a.busy = busy; busy >= a.floor {
		a.credit = 0
	}
	a.credit = min(a.credit, a.cap)
}

// gate admits the servers of one Run: a slot each under a fixed
// Options.Parallel (every server for 0), the admission policy under Adaptive.
type gate struct {
	slots chan struct{} // fixed
	adm   *admission    // Adaptive; only Run's goroutine touches it
	gauge *cpuGauge

	mu    sync.Mutex
	alive map[int]*atomic.Int64 // by target index: the pid of its attempt (stdio only under Adaptive)
	ended []int                 // pids that ended, until wait takes them
	freed chan struct{}         // a server ended; buffered, so done never blocks
}

func newGate(parallel, n int) *gate {
	g := &gate{alive: map[int]*atomic.Int64{}, freed: make(chan struct{}, 1)}
	switch {
	case parallel == Adaptive:
		g.adm, g.gauge = newAdmission(admitFloor(), admitCap), newCPUGauge()
		g.adm.observe(g.gauge.read(nil)) // whether there is anything to read
	case parallel > 0:
		g.slots = make(chan struct{}, parallel)
	default:
		g.slots = make(chan struct{}, max(n, 1))
	}
	return g
}

// wait returns when one more server may start, or ctx is done. It calls
// spawning before it first has to wait.
func (g *gate) wait(ctx context.Context, spawning func()) {
	if g.adm == nil {
		select {
		case g.slots <- struct{}{}:
		default:
			spawning()
			g.slots <- struct{}{} // a server ends soon after ctx does
		}
		return
	}
	for {
		if g.adm.admit(g.count()) || ctx.Err() != nil {
			return
		}
		spawning()
		t := time.NewTimer(admitTick)
		select {
		case <-t.C:
			g.adm.ended(g.takeEnded()) // before the reading, which no longer finds them
			g.mu.Lock()
			pids := make([]int, 0, len(g.alive))
			for _, p := range g.alive {
				if pid := int(p.Load()); pid > 0 {
					pids = append(pids, pid)
				}
			}
			g.mu.Unlock()
			g.adm.observe(g.gauge.read(pids))
		case <-g.freed:
			g.adm.ended(g.takeEnded())
		case <-ctx.Done():
		}
		t.Stop()
	}
}

func (g *gate) takeEnded() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	ended := g.ended
	g.ended = nil
	return ended
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.alive)
}

// started records the server of target i as alive. Under Adaptive a
// remote server, or one that could not be started, takes no place: it
// holds no CPU here.
func (g *gate) started(i int, pid *atomic.Int64) {
	if g.adm != nil && pid.Load() == 0 {
		return
	}
	g.mu.Lock()
	g.alive[i] = pid
	g.mu.Unlock()
}

// done records the end of target i's server, freeing its place.
func (g *gate) done(i int) {
	g.mu.Lock()
	if p := g.alive[i]; p != nil && p.Load() > 0 && g.adm != nil {
		g.ended = append(g.ended, int(p.Load()))
	}
	delete(g.alive, i)
	g.mu.Unlock()
	if g.slots != nil {
		<-g.slots
		return
	}
	select {
	case g.freed <- struct{}{}:
	default:
	}
}
