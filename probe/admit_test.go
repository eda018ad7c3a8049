package probe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"testing"
	"time"
)

// The admission policy over fake readings. A step asks admit (alive ->
// want) or feeds a reading: the alive servers by pid, as "r" (running,
// cheap so far), "R" (running past heavyCPU), "s" (idle, cheap), "S" (idle
// after a heavy start), and the pids that ended.
func TestAdmission(t *testing.T) {
	type step struct {
		read  bool
		alive int
		want  bool
		seen  string // one letter per alive server, pid = position+1
		ended []int
		none  bool // no reading (no /proc)
	}
	ask := func(alive int, want bool) step { return step{alive: alive, want: want} }
	reading := func(seen string, ended ...int) step { return step{read: true, seen: seen, ended: ended} }
	tests := []struct {
		name  string
		floor int
		cap   int
		steps []step
	}{
		{"below the floor, always", 2, 8, []step{ask(0, true), ask(1, true), ask(2, false), reading("RR"), ask(1, true), ask(2, false)}},
		{"an unknown start grants nothing", 2, 8, []step{reading("rr"), ask(2, false), reading("rr"), ask(2, false)}},
		{"silent servers settle and grant one each", 2, 64, []step{
			reading("ss"), ask(2, false), // idle once is not settled yet
			reading("ss"), ask(2, true), ask(3, true), ask(4, false),
			reading("ssss"), ask(4, false), // settled ones grant once
			reading("ssss"), ask(4, true), ask(5, true), ask(6, false)}},
		{"cheap servers that ended grant two each", 2, 64, []step{
			reading(""), reading("", 1, 2), ask(2, true), ask(3, true), ask(4, true), ask(5, true), ask(6, false)}},
		{"a heavy start that ended is only replaced", 2, 64, []step{
			reading("RR"), reading("", 1, 2), ask(1, true), ask(2, false)}},
		{"a heavy start that settled grants its replacement", 2, 64, []step{
			reading("RR"), reading("SR"), reading("SR"), ask(2, true), ask(3, false)}},
		{"a cheap server that settled then ended grants no more", 2, 64, []step{
			reading("s"), reading("s"), reading("", 1), ask(2, true), ask(3, false)}},
		{"a start running between idle readings does not settle", 2, 64, []step{
			reading("s"), reading("r"), reading("s"), ask(2, false), reading("s"), ask(2, true)}},
		{"a cheap end while the floor is busy grants nothing", 2, 64, []step{
			reading("RR"), reading("RR", 3), ask(2, false)}},
		{"the floor busy with heavy starts takes the credit back", 2, 64, []step{
			reading("ss"), reading("ssRR"), ask(4, false)}},
		{"never past the cap", 2, 4, []step{reading("ss"), reading("ss"), ask(3, true), ask(4, false), ask(5, false)}},
		{"the cap is at least the floor", 4, 1, []step{ask(3, true), ask(4, false)}},
		{"no reading: the floor", 2, 64, []step{{read: true, none: true}, ask(1, true), ask(2, false)}},
		{"no reading: an end grants nothing", 2, 64, []step{{read: true, none: true, ended: []int{1, 2}}, ask(2, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdmission(tt.floor, tt.cap)
			for i, s := range tt.steps {
				if !s.read {
					if got := a.admit(s.alive); got != s.want {
						t.Fatalf("step %d: admit(%d) = %v, want %v (floor %d, cap %d, steps %+v)", i, s.alive, got, s.want, tt.floor, tt.cap, tt.steps)
					}
					continue
				}
				alive := map[int]usage{}
				for j, c := range s.seen {
					u := usage{running: c == 'r' || c == 'R', cpu: time.Millisecond}
					if c == 'R' || c == 'S' {
						u.cpu = heavyCPU
					}
					alive[j+1] = u
				}
				a.ended(s.ended) // as the gate does: before the reading
				a.observe(alive, !s.none)
			}
		})
	}
}

// overlap is the most intervals [from, to) open at once.
func overlap(from, to []time.Time) int {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for i := range from {
		edges = append(edges, edge{from[i], 1}, edge{to[i], -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].d < edges[j].d
		}
		return edges[i].at.Before(edges[j].at)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	return most
}

// Silent servers sleep: under Adaptive they do not hold the next ones back,
// so every one of them waits out its deadline alongside the others.
func TestAdaptiveAdmitsPastSilentServers(t *testing.T) {
	n := admitFloor() + 3
	var targets []Target
	for i := range n {
		tg := fixture("silent")
		tg.Name = fmt.Sprintf("silent-%d", i)
		targets = append(targets, tg)
	}
	results := Run(t.Context(), targets, Options{Timeout: 10 * time.Second, Parallel: Adaptive, Env: testEnv()})
	from, to := lifetimes(t, results, Timeout)
	if got := overlap(from, to); got != n {
		t.Errorf("%d silent servers under Adaptive: got %d alive at once, want all %d (floor %d)", n, got, n, admitFloor())
	}
}

// lifetimes checks that every result is want and returns when each probe
// started and ended.
func lifetimes(t *testing.T, results []Result, want Outcome) (from, to []time.Time) {
	t.Helper()
	for _, r := range results {
		if r.Outcome != want {
			t.Fatalf("%s: got %s %q, want %s", r.Server, r.Outcome, r.Detail, want)
		}
		from, to = append(from, r.Started), append(to, r.Started.Add(r.Elapsed))
	}
	return from, to
}

// Servers that keep a CPU busy while they start hold admission at the
// floor: no more of them start than there are CPUs.
func TestAdaptiveHoldsBackBusyStarts(t *testing.T) {
	floor := admitFloor()
	n := 2*floor + 1
	var targets []Target
	for i := range n {
		tg := edgeTarget("burn", "300ms")
		tg.Name = fmt.Sprintf("burn-%d", i)
		targets = append(targets, tg)
	}
	results := Run(t.Context(), targets, Options{Timeout: 60 * time.Second, Parallel: Adaptive, Env: testEnv()})
	var from, to []time.Time
	for _, r := range results {
		if r.Outcome != Ready {
			t.Fatalf("%s: got %s %q, want READY", r.Server, r.Outcome, r.Detail)
		}
		// The start is over when the handshake is answered.
		end := time.Time{}
		for _, s := range r.Timeline {
			if s.Event == "response_received" {
				end = s.At
				break
			}
		}
		if end.IsZero() {
			t.Fatalf("%s: no response_received in %+v", r.Server, r.Timeline)
		}
		from, to = append(from, r.Started), append(to, end)
	}
	if got := overlap(from, to); got > floor {
		t.Errorf("%d servers spending 300ms of CPU at start: got %d starting at once, want at most the floor %d", n, got, floor)
	}
}

// The gauge reads a sleeping server as idle and cheap, and a burning one as
// running and then heavy; each half fails if the gauge always answers the same.
func TestCPUGauge(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		t.Skip("no gauge: neither /proc nor the Windows process list")
	}
	start := func(tg Target) int {
		var r Result
		p, err := startStdio(tg, testEnv(), time.Now().Add(time.Minute), &r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.stop(&r) })
		return p.proc.Pid
	}
	sleeper, burner := start(fixture("silent")), start(edgeTarget("burn", "60s"))
	g := newCPUGauge()
	const gaugeWait = time.Minute // generous: the machine may be busy
	// The sleeper is this test binary, whose start may cost more than
	// heavyCPU when it is race-built on a loaded machine: once started it
	// must read idle, with a CPU time that no longer grows.
	deadline := time.Now().Add(gaugeWait)
	var idle bool
	var last time.Duration = -1
	for !idle && time.Now().Before(deadline) {
		time.Sleep(admitTick)
		u, ok := g.read([]int{sleeper, burner})
		if !ok {
			t.Fatalf("read(%d, %d): no reading", sleeper, burner)
		}
		s := u[sleeper]
		idle = !s.running && s.cpu == last
		last = s.cpu
	}
	if !idle {
		t.Errorf("a silent server read running, or its CPU time growing, for %s; want idle once started", gaugeWait)
	}
	deadline = time.Now().Add(gaugeWait)
	var heavy bool
	for !heavy && time.Now().Before(deadline) {
		time.Sleep(admitTick)
		u, _ := g.read([]int{burner})
		if !u[burner].running {
			t.Fatalf("a server burning a CPU read %+v, want running", u[burner])
		}
		heavy = u[burner].cpu >= heavyCPU
	}
	if !heavy {
		t.Errorf("a server burning a CPU for %s never read past %s of CPU time", gaugeWait, heavyCPU)
	}
}

// Remote servers use no CPU here: under Adaptive they take no place, so a
// slow one does not hold the next back.
func TestAdaptiveRemoteTakesNoPlace(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	n := admitFloor() + 2
	var targets []Target
	for i := range n {
		targets = append(targets, Target{Name: fmt.Sprintf("remote-%d", i), URL: srv.URL})
	}
	results := Run(t.Context(), targets, Options{Timeout: 5 * time.Second, Parallel: Adaptive, Env: testEnv()})
	from, to := lifetimes(t, results, Timeout)
	if got := overlap(from, to); got != n {
		t.Errorf("%d silent remote servers under Adaptive: got %d probed at once, want all %d (floor %d)", n, got, n, admitFloor())
	}
}
