package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// build compiles one of the module's commands into dir.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpshim-dev/mcpshim/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// TestRunMeasuresEveryPipeline drives the real programs over real pipes with
// a few trips and a 2 MiB line: enough to see the flags reach mcpshim (only
// --max-observe 1048576 truncates) and every figure get filled in.
func TestRunMeasuresEveryPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs")
	}
	bin := t.TempDir()
	cfg := config{
		echo:      build(t, bin, "bench/relay/echo"),
		bare:      build(t, bin, "bench/relay/bare"),
		shim:      build(t, bin, "cmd/mcpshim"),
		trips:     50,
		warmup:    5,
		hugeBytes: 2 << 20,
		reps:      2,
		work:      t.TempDir(),
		block:     20,
		settle:    100 * time.Millisecond,
	}
	ps, err := run(cfg, specs(cfg))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// The 2 MiB tool results are past the MiB the tap keeps of a line it does not need whole.
	wantTruncated := map[string]int{"direct": 0, "bare": 0, "mcpshim": 2, "mcpshim-obs1m": 2}
	if len(ps) != len(wantTruncated) {
		t.Fatalf("run: got %d pipelines, want %d", len(ps), len(wantTruncated))
	}
	for _, p := range ps {
		if len(p.trips) != cfg.trips || len(p.mibps) != cfg.reps {
			t.Errorf("%s: got %d trips and %d huge lines, want %d and %d", p.name, len(p.trips), len(p.mibps), cfg.trips, cfg.reps)
		}
		if runtime.GOOS == "linux" && (p.peak <= 0 || p.cpuTrips < 0 || p.cpuHuge < 0) {
			t.Errorf("%s: got peak RSS %d, CPU %v and %v; want all read from /proc", p.name, p.peak, p.cpuTrips, p.cpuHuge)
		}
		if p.maxrss <= 0 {
			t.Errorf("%s: got maxrss %d, want > 0", p.name, p.maxrss)
		}
		if p.spec.ledger == "" {
			continue
		}
		// initialize and 50+5 calls give two records each, plus launch and the huge calls.
		if p.ledger.records < 2*(1+cfg.warmup+cfg.trips) || p.ledger.lost != 0 {
			t.Errorf("%s: got %d ledger records, %d lost; want at least %d, none lost", p.name, p.ledger.records, p.ledger.lost, 2*(1+cfg.warmup+cfg.trips))
		}
		if p.ledger.truncated != wantTruncated[p.name] {
			t.Errorf("%s: got %d message_truncated, want %d", p.name, p.ledger.truncated, wantTruncated[p.name])
		}
	}
}
