package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// row is one figure of one pipeline in one run.
type row struct {
	measure, pipeline string
	value             float64
}

// measure is one row of issue 14's table. A ratio row compares each relay to
// the bare relay of the same run; the others are absolute.
type measure struct {
	key, label, unit string
	ratio            bool
	goal             string
}

var measures = []measure{
	{"trip_p50", "small round trip p50", "µs", true, "≤ 1.05×"},
	{"trip_p99", "small round trip p99", "µs", true, "≤ 1.2×"},
	{"inflight_p50", "32 requests in flight, p50 latency", "µs", true, "≤ 1.5×"},
	{"inflight_rps", "32 requests in flight, req/s", "req/s", true, "≥ 0.75×"},
	{"flood_s2c", "1 KiB lines, throughput s2c", "MiB/s", true, "≥ 0.6×"},
	{"flood_c2s", "1 KiB lines, throughput c2s", "MiB/s", true, "≥ 0.6×"},
	{"flood_cpu_s2c", "relay CPU per 100k 1 KiB lines s2c", "ms", true, "≤ 3×"},
	{"flood_cpu_c2s", "relay CPU per 100k 1 KiB lines c2s", "ms", true, "≤ 3×"},
	{"huge_s2c", "one 64 MiB line, throughput s2c", "MiB/s", true, "≥ 0.9×"},
	{"huge_c2s", "one 64 MiB line, throughput c2s", "MiB/s", true, "≥ 0.9×"},
	{"peak_s2c", "VmHWM after the 64 MiB server lines", "MiB", false, ""},
	{"peak_c2s", "VmHWM after the 64 MiB client lines too", "MiB", false, "≤ 24 MiB"},
	{"first_byte", "exec to first byte of the initialize answer", "ms", true, "≤ 1.3×"},
	{"binary_mb", "binary (stripped)", "MB", false, "≤ 12 MB"},
	{"binary_mb_unstripped", "binary (not stripped)", "MB", false, ""},
	{"init_ms", "package init (inittrace sum)", "ms", false, "≤ 3 ms"},
	{"init_pkgs", "packages initialised", "", false, ""},
	{"idle_rss", "idle RSS after the handshake", "MiB", false, "≤ 10 MiB"},
	{"probe_wall", "probe of 100 servers, 3 silent, 2 s deadline", "s", false, "≤ 2.3 s"},
	{"probe_cpu", "the probe's own CPU per healthy server", "ms", false, "≤ seed's"},
	{"probe_seed_wall", "the same fleet, seed 000's Python probe (16 workers)", "s", false, ""},
	{"probe_seed_cpu", "its own CPU per healthy server", "ms", false, ""},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func mib(b int64) float64        { return float64(b) / (1 << 20) }

// collect turns what run measured into rows; what could not be read is left out.
func collect(cfg config, ps []*pipeline) []row {
	var rows []row
	for _, p := range ps {
		add := func(m string, v float64, ok bool) {
			if ok {
				rows = append(rows, row{m, p.name, v})
			}
		}
		trips := stats(p.trips)
		add("trip_p50", us(trips.Median), len(p.trips) > 0)
		add("trip_p99", us(trips.P99), len(p.trips) > 0)
		add("inflight_p50", us(stats(p.inflight).Median), len(p.inflight) > 0)
		add("inflight_rps", medianFloat(slices.Clone(p.rps)), len(p.rps) > 0)
		add("flood_s2c", p.floodS2C, p.floodS2C > 0)
		add("flood_c2s", p.floodC2S, p.floodC2S > 0)
		add("flood_cpu_s2c", ms(p.floodCPUS2C), p.floodCPUS2C >= 0 && p.floodS2C > 0)
		add("flood_cpu_c2s", ms(p.floodCPUC2S), p.floodCPUC2S >= 0 && p.floodC2S > 0)
		add("huge_s2c", medianFloat(slices.Clone(p.hugeS2C)), len(p.hugeS2C) > 0)
		add("huge_c2s", medianFloat(slices.Clone(p.hugeC2S)), len(p.hugeC2S) > 0)
		add("peak_s2c", mib(p.peakS2C), p.peakS2C > 0 && p.name != "direct")
		add("peak_c2s", mib(p.peakC2S), p.peakC2S > 0 && p.name != "direct")
		add("idle_rss", mib(p.idle), p.idle > 0 && p.name != "direct")
	}
	return rows
}

func writeRows(path string, rows []row) error {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%g\n", r.measure, r.pipeline, r.value)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("rows: %w", err)
	}
	return nil
}

// report prints one run: every measure with every pipeline's figure.
func report(w io.Writer, cfg config, ps []*pipeline, rows []row) {
	fmt.Fprintf(w, "relay benchmark  %s  %s %s/%s  %d CPUs  load average %s at start, %s at end\n",
		time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cfg.load, loadAvg())
	fmt.Fprintf(w, "%d small trips after %d warm-up in turns of %d; %d requests %d in flight; floods of %d B of %d B lines; %d huge lines of %d B each way; %d fresh starts\n",
		cfg.trips, cfg.warmup, cfg.block, cfg.inflightN, cfg.depth, cfg.floodBytes, cfg.floodLine, cfg.reps, cfg.hugeBytes, cfg.starts)
	var names []string
	for _, p := range ps {
		names = append(names, p.name)
	}
	fmt.Fprintf(w, "\n%-46s", "measure")
	for _, n := range names {
		fmt.Fprintf(w, " %12s", n)
	}
	fmt.Fprintln(w)
	for _, m := range measures {
		vals := map[string]float64{}
		for _, r := range rows {
			if r.measure == m.key {
				vals[r.pipeline] = r.value
			}
		}
		if len(vals) == 0 {
			continue
		}
		fmt.Fprintf(w, "%-46s", m.label+" "+m.unit)
		for _, n := range names {
			if v, ok := vals[n]; ok {
				fmt.Fprintf(w, " %12.4g", v)
			} else {
				fmt.Fprintf(w, " %12s", "-")
			}
		}
		fmt.Fprintln(w)
	}
	for _, p := range ps {
		if p.spec.ledger != "" {
			fmt.Fprintf(w, "\n%s ledger: %d records, %d records_lost, %d message_truncated\n", p.name, p.ledger.records, p.ledger.lost, p.ledger.truncated)
		}
	}
}

// summarize prints the table of several runs' rows.tsv: for a ratio row,
// the median and range of the per-run ratios to bare (the figure itself in
// the bare column); for the others, the median and range of the figures.
func summarize(w io.Writer, files []string) error {
	runs := make([]map[string]map[string]float64, 0, len(files)) // measure -> pipeline -> value
	var order []string
	seen := map[string]bool{}
	for _, f := range files {
		run, err := readRows(f)
		if err != nil {
			return err
		}
		for _, pipes := range run {
			for p := range pipes {
				if !seen[p] {
					seen[p] = true
					order = append(order, p)
				}
			}
		}
		runs = append(runs, run)
	}
	cols := slices.DeleteFunc(order, func(p string) bool { return p == "direct" })
	slices.SortStableFunc(cols, func(a, b string) int { return rank(a) - rank(b) })
	fmt.Fprintf(w, "%d runs; ratio rows: median (range) of the per-run ratio to the bare relay\n\n", len(runs))
	fmt.Fprintf(w, "| measure | %s | goal |\n|---|%s---|\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, m := range measures {
		cells := make([]string, len(cols))
		any := false
		for i, p := range cols {
			var xs []float64
			for _, run := range runs {
				v, ok := run[m.key][p]
				if !ok {
					continue
				}
				if m.ratio && p != "bare" {
					b, ok := run[m.key]["bare"]
					if !ok || b == 0 {
						continue
					}
					v /= b
				}
				xs = append(xs, v)
			}
			if len(xs) == 0 {
				cells[i] = "—"
				continue
			}
			any = true
			unit := " " + m.unit
			if m.ratio && p != "bare" {
				unit = "×"
			}
			cells[i] = spread(xs) + unit
		}
		if any {
			fmt.Fprintf(w, "| %s | %s | %s |\n", m.label, strings.Join(cells, " | "), m.goal)
		}
	}
	return nil
}

// rank orders the summary's columns: the baseline, ours, the peer.
func rank(p string) int {
	return map[string]int{"bare": 0, "mcpshim": 1, "mcpsnoop": 2, "mcpsnoop-off": 3}[p]
}

// spread is "median (min–max)", or the value alone for one run.
func spread(xs []float64) string {
	slices.Sort(xs)
	med := medianFloat(slices.Clone(xs))
	if len(xs) == 1 || xs[0] == xs[len(xs)-1] {
		return num(med)
	}
	return fmt.Sprintf("%s (%s–%s)", num(med), num(xs[0]), num(xs[len(xs)-1]))
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func readRows(path string) (map[string]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	defer f.Close()
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 3 {
			return nil, fmt.Errorf("%s:%d: got %q, want measure, pipeline and value between tabs", path, n, sc.Text())
		}
		v, err := strconv.ParseFloat(fs[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if out[fs[0]] == nil {
			out[fs[0]] = map[string]float64{}
		}
		out[fs[0]][fs[1]] = v
	}
	return out, sc.Err()
}
