package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// build is one of the module's commands, built once.
func build(t *testing.T, pkg string) string {
	return testkit.MustBuild(t, "github.com/mcpshim-dev/mcpshim/"+pkg)
}

// TestRunMeasuresEveryPipeline drives the real programs over real pipes with
// a few trips, small floods and 2 MiB lines: enough to see every figure
// filled in and every line arrive.
func TestRunMeasuresEveryPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs")
	}
	cfg := config{
		echo:       build(t, "bench/relay/echo"),
		bare:       build(t, "bench/relay/bare"),
		shim:       build(t, "cmd/mcpshim"),
		trips:      50,
		warmup:     5,
		depth:      8,
		inflightN:  100,
		floodBytes: 2 << 20,
		floodLine:  1024,
		hugeBytes:  2 << 20,
		reps:       2,
		starts:     2,
		inits:      1,
		work:       t.TempDir(),
		block:      20,
		settle:     100 * time.Millisecond,
	}
	ss := specs(cfg)
	ps, err := run(cfg, ss)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(ps) != 3 {
		t.Fatalf("run: got %d pipelines, want direct, bare and mcpshim", len(ps))
	}
	for _, p := range ps {
		if len(p.trips) != cfg.trips || len(p.inflight) != cfg.inflightN || len(p.hugeS2C) != cfg.reps || len(p.hugeC2S) != cfg.reps {
			t.Errorf("%s: got %d trips, %d pipelined, %d and %d huge lines; want %d, %d, %d and %d", p.name,
				len(p.trips), len(p.inflight), len(p.hugeS2C), len(p.hugeC2S), cfg.trips, cfg.inflightN, cfg.reps, cfg.reps)
		}
		if p.floodS2C <= 0 || p.floodC2S <= 0 {
			t.Errorf("%s: got flood MiB/s %g and %g, want both measured", p.name, p.floodS2C, p.floodC2S)
		}
		if runtime.GOOS == "linux" && (p.peakC2S <= 0 || p.idle <= 0 || p.floodCPUS2C < 0) {
			t.Errorf("%s: got peak RSS %d, idle %d, CPU %v; want all read from /proc", p.name, p.peakC2S, p.idle, p.floodCPUS2C)
		}
		if p.spec.ledger == "" {
			continue
		}
		// initialize and 50+5 calls give two records each, plus launch and the others.
		if p.ledger.records < 2*(1+cfg.warmup+cfg.trips) || p.ledger.lost != 0 {
			t.Errorf("%s: got %d ledger records, %d lost; want at least %d, none lost", p.name, p.ledger.records, p.ledger.lost, 2*(1+cfg.warmup+cfg.trips))
		}
	}
	rows := collect(cfg, ps)
	sr, err := startup(cfg, ss)
	if err != nil {
		t.Fatalf("startup: %v", err)
	}
	rows = append(rows, sr...)
	have := map[string]bool{}
	for _, r := range rows {
		have[r.measure+" "+r.pipeline] = true
	}
	for _, want := range []string{"first_byte mcpshim", "init_ms mcpshim", "binary_mb_unstripped mcpshim", "huge_c2s bare", "flood_cpu_c2s mcpshim"} {
		if !have[want] {
			t.Errorf("rows: no %s in %v", want, rows)
		}
	}
	path := filepath.Join(cfg.work, "rows.tsv")
	if err := writeRows(path, rows); err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	if err := summarize(&sum, []string{path, path}); err != nil {
		t.Fatalf("summarize: %v", err)
	}
	if !strings.Contains(sum.String(), "| one 64 MiB line, throughput c2s | ") || !strings.Contains(sum.String(), "× | ≥ 0.9× |") {
		t.Errorf("summarize: got\n%s\nwant a row per measure, mcpshim's as a ratio to bare", sum.String())
	}
}
