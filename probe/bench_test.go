package probe

import (
	"fmt"
	"testing"
	"time"
)

// benchFleet probes targets once per iteration and reports the wall time
// and the probe's own CPU time per run.
func benchFleet(b *testing.B, targets []Target, opts Options) {
	opts.Env = testEnv()
	var wall, cpu time.Duration
	for b.Loop() {
		start, cpu0 := time.Now(), ownCPU()
		results := Run(b.Context(), targets, opts)
		wall += time.Since(start)
		cpu += ownCPU() - cpu0
		counts := map[Outcome]int{}
		var lastSpawn time.Duration // how late the last deadline started
		for _, r := range results {
			counts[r.Outcome]++
			lastSpawn = max(lastSpawn, r.Started.Sub(start))
		}
		b.Logf("%d servers, deadline %s, parallel %d: %v in %s, last start after %s, probe CPU %s", len(targets), opts.Timeout, opts.Parallel, counts, time.Since(start).Round(time.Millisecond), lastSpawn.Round(time.Millisecond), (ownCPU() - cpu0).Round(time.Millisecond))
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// The speed goal: 100 servers, 3 silent, a 2s deadline, on 2 cores.
// Run with: go test -run '^$' -bench Fleet100 -benchtime 1x ./probe/
func BenchmarkFleet100(b *testing.B) {
	var targets []Target
	for i := range 100 {
		t := fixture("healthy")
		if i%33 == 32 {
			t = fixture("silent")
		}
		t.Name = fmt.Sprintf("%s-%d", t.Name, i)
		targets = append(targets, t)
	}
	for _, parallel := range []int{Adaptive, 0, 16} {
		name := fmt.Sprintf("parallel-%d", parallel)
		if parallel == Adaptive {
			name = "parallel-auto"
		}
		b.Run(name, func(b *testing.B) {
			benchFleet(b, targets, Options{Timeout: 2 * time.Second, Parallel: parallel})
		})
	}
}

// A fleet of 14: nine healthy at 0.2s, two at 2.5s, three silent,
// a 5s deadline, one at a time and sixteen at a time.
func BenchmarkSeedFleet(b *testing.B) {
	var targets []Target
	for i := range 14 {
		var t Target
		switch {
		case i < 9:
			t = edgeTarget("slow-start", "200ms")
		case i < 11:
			t = edgeTarget("slow-start", "2500ms")
		default:
			t = fixture("silent")
		}
		t.Name = fmt.Sprintf("%s-%d", t.Name, i)
		targets = append(targets, t)
	}
	for _, parallel := range []int{1, 16} {
		b.Run(fmt.Sprintf("parallel-%d", parallel), func(b *testing.B) {
			benchFleet(b, targets, Options{Timeout: 5 * time.Second, Parallel: parallel})
		})
	}
}
