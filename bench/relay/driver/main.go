// Command driver measures, in one run, what a relay in front of a stdio MCP
// server costs: small request/response round trips and one huge response line
// through a direct pipe, a bare io.Copy relay and mcpshim with its ledger on.
// All pipelines are alive at once and take turns (a block of round trips, or
// one huge line, each), so that load from others on a shared machine falls on
// all of them alike.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// config is the driver's flags.
type config struct {
	echo, bare, shim string
	trips, warmup    int
	block            int // trips of one pipeline before the next one's turn
	hugeBytes, reps  int
	work             string
	settle, pause    time.Duration
	load             string // load average when the run started
}

func main() {
	var cfg config
	flag.StringVar(&cfg.echo, "echo", "", "the echo server binary (required)")
	flag.StringVar(&cfg.bare, "bare", "", "the bare relay binary (required)")
	flag.StringVar(&cfg.shim, "shim", "", "the mcpshim binary; empty measures only direct and bare")
	flag.IntVar(&cfg.trips, "n", 5000, "small round trips per pipeline")
	flag.IntVar(&cfg.block, "block", 250, "round trips of one pipeline before the next pipeline's turn")
	flag.IntVar(&cfg.warmup, "warmup", 200, "round trips per pipeline before measuring, not counted")
	flag.IntVar(&cfg.hugeBytes, "huge", 64<<20, "bytes of the huge response line, newline included")
	flag.IntVar(&cfg.reps, "reps", 9, "huge lines per pipeline (throughput is noisy on a shared machine: the median is reported)")
	flag.StringVar(&cfg.work, "work", "", "directory for ledgers and stderr logs (default: a new temporary one)")
	flag.DurationVar(&cfg.settle, "settle", 300*time.Millisecond, "wait after each phase before reading CPU time and peak RSS, so the recorder has handled its lines")
	flag.DurationVar(&cfg.pause, "pause", 50*time.Millisecond, "wait after each huge line before the next pipeline's")
	flag.Parse()
	if cfg.block <= 0 {
		cfg.block = 1
	}
	if cfg.echo == "" || cfg.bare == "" {
		fmt.Fprintln(os.Stderr, "usage: driver -echo ECHO -bare BARE [-shim MCPSHIM] [flags]")
		os.Exit(64)
	}
	if cfg.work == "" {
		dir, err := os.MkdirTemp("", "relaybench")
		if err != nil {
			fmt.Fprintf(os.Stderr, "driver: %v\n", err)
			os.Exit(1)
		}
		cfg.work = dir
	}
	cfg.load = loadAvg()
	ps, err := run(cfg, specs(cfg))
	if err != nil {
		fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		os.Exit(1)
	}
	report(os.Stdout, cfg, ps)
}

// spec is one way of reaching the echo server.
type spec struct {
	name   string
	argv   []string
	ledger string // the mcpshim ledger file, "" for the others
}

func specs(cfg config) []spec {
	out := []spec{
		{name: "direct", argv: []string{cfg.echo}},
		{name: "bare", argv: []string{cfg.bare, cfg.echo}},
	}
	if cfg.shim == "" {
		return out
	}
	shim := func(name string, flags ...string) spec {
		ledger := filepath.Join(cfg.work, name+".jsonl")
		argv := append([]string{cfg.shim, "--name", name, "--ledger", ledger}, flags...)
		return spec{name: name, argv: append(argv, "--", cfg.echo), ledger: ledger}
	}
	return append(out, shim("mcpshim"), shim("mcpshim-obs1m", "--max-observe", "1048576"))
}

// pipeline is one running spec and what was measured through it.
type pipeline struct {
	spec
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	id     int
	buf    []byte
	trips  []time.Duration
	mibps  []float64 // one per huge line
	peak   int64     // VmHWM before exit; 0 when unknown
	maxrss int64     // wait4's Maxrss after exit
	// CPU time of the pipeline's first process during the measured trips and
	// during the huge lines; -1 when it cannot be read.
	cpuTrips, cpuHuge time.Duration
	ledger            ledgerStats
}

type ledgerStats struct {
	records, lost, truncated int
}

func start(s spec, work string) (*pipeline, error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	errLog, err := os.Create(filepath.Join(work, s.name+".stderr"))
	if err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	defer errLog.Close() // the child has its own copy
	cmd.Stderr = errLog
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	return &pipeline{spec: s, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 256<<10), cpuTrips: -1, cpuHuge: -1}, nil
}

// exchange writes one request line and reads the response line, returning
// how long that took. The response must carry the request's id.
func (p *pipeline) exchange(request string) (time.Duration, error) {
	p.id++
	p.buf = fmt.Appendf(p.buf[:0], request+"\n", p.id)
	want := fmt.Appendf(nil, `"id":%d,`, p.id)
	t0 := time.Now()
	if _, err := p.in.Write(p.buf); err != nil {
		return 0, fmt.Errorf("%s: write request %d: %w", p.name, p.id, err)
	}
	line, err := p.out.ReadSlice('\n')
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%s: read response %d: %w", p.name, p.id, err)
	}
	if !bytes.Contains(line, want) {
		return 0, fmt.Errorf("%s: response %q: want id %d", p.name, line, p.id)
	}
	return d, nil
}

const (
	initialize  = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"driver","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	echoCall    = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	hugeCall    = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"huge","arguments":{"bytes":%d}}}`
)

func (p *pipeline) handshake() error {
	if _, err := p.exchange(initialize); err != nil {
		return err
	}
	if _, err := io.WriteString(p.in, initialized); err != nil {
		return fmt.Errorf("%s: write initialized: %w", p.name, err)
	}
	return nil
}

// huge asks for one response line of size bytes and times it from the
// request's write to the response's newline.
func (p *pipeline) huge(size int) (time.Duration, error) {
	p.id++
	req := fmt.Sprintf(hugeCall+"\n", p.id, size)
	want := fmt.Appendf(nil, `"id":%d,`, p.id)
	t0 := time.Now()
	if _, err := io.WriteString(p.in, req); err != nil {
		return 0, fmt.Errorf("%s: write request %d: %w", p.name, p.id, err)
	}
	n, first := 0, true
	for {
		chunk, err := p.out.ReadSlice('\n')
		if first && len(chunk) > 0 {
			if !bytes.Contains(chunk[:min(len(chunk), 64)], want) {
				return 0, fmt.Errorf("%s: huge response starts %q: want id %d", p.name, chunk[:min(len(chunk), 64)], p.id)
			}
			first = false
		}
		n += len(chunk)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("%s: read huge response %d after %d bytes: %w", p.name, p.id, n, err)
		}
	}
	d := time.Since(t0)
	if n != size {
		return 0, fmt.Errorf("%s: huge response %d: got %d bytes, want %d", p.name, p.id, n, size)
	}
	return d, nil
}

// run starts every pipeline, measures them in turns and stops them.
func run(cfg config, ss []spec) ([]*pipeline, error) {
	var ps []*pipeline
	defer func() {
		for _, p := range ps {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	}()
	for _, s := range ss {
		p, err := start(s, cfg.work)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		if err := p.handshake(); err != nil {
			return nil, err
		}
	}
	for range cfg.warmup {
		for _, p := range ps {
			if _, err := p.exchange(echoCall); err != nil {
				return nil, err
			}
		}
	}
	cpu0 := cpuTimes(ps)
	// Blocks rather than single trips: mcpshim's recorder finishes its work
	// after a response is relayed, and it must not land in another pipeline's trip.
	for done := 0; done < cfg.trips; done += cfg.block {
		for _, p := range ps {
			for range min(cfg.block, cfg.trips-done) {
				d, err := p.exchange(echoCall)
				if err != nil {
					return nil, err
				}
				p.trips = append(p.trips, d)
			}
		}
	}
	// The recorder may still be writing the last records; they belong to the trips.
	time.Sleep(cfg.settle)
	cpu1 := cpuTimes(ps)
	for range cfg.reps {
		for _, p := range ps {
			d, err := p.huge(cfg.hugeBytes)
			if err != nil {
				return nil, err
			}
			p.mibps = append(p.mibps, float64(cfg.hugeBytes)/(1<<20)/d.Seconds())
			time.Sleep(cfg.pause) // the same reason as the blocks above
		}
	}
	time.Sleep(cfg.settle)
	cpu2 := cpuTimes(ps)
	for i, p := range ps {
		if cpu0[i] >= 0 && cpu1[i] >= 0 && cpu2[i] >= 0 {
			p.cpuTrips, p.cpuHuge = cpu1[i]-cpu0[i], cpu2[i]-cpu1[i]
		}
	}
	for _, p := range ps {
		p.peak, _ = peakRSS(p.cmd.Process.Pid)
	}
	for _, p := range ps {
		p.in.Close()
		if err := p.cmd.Wait(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		p.maxrss = maxRSS(p.cmd.ProcessState)
		if p.spec.ledger != "" {
			st, err := readLedger(p.spec.ledger)
			if err != nil {
				return nil, err
			}
			p.ledger = st
		}
	}
	return ps, nil
}

// cpuTimes reads each pipeline's CPU time so far; -1 where it cannot be read.
func cpuTimes(ps []*pipeline) []time.Duration {
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		d, err := cpuTime(p.cmd.Process.Pid)
		if err != nil {
			d = -1
		}
		out[i] = d
	}
	return out
}

func readLedger(path string) (ledgerStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ledgerStats{}, fmt.Errorf("ledger: %w", err)
	}
	return ledgerStats{
		records:   bytes.Count(b, []byte("\n")),
		lost:      bytes.Count(b, []byte(`"event":"records_lost"`)),
		truncated: bytes.Count(b, []byte(`"event":"message_truncated"`)),
	}, nil
}

// Goals from issue 2 ("Speed").
const (
	goalLatencyRatio    = 1.5      // mcpshim median round trip over bare's, at most
	goalThroughputRatio = 0.8      // mcpshim huge-line MiB/s over bare's, at least
	goalPeakRSS         = 32 << 20 // mcpshim peak RSS while relaying the huge line, at most
)

func report(w io.Writer, cfg config, ps []*pipeline) {
	fmt.Fprintf(w, "relay benchmark  %s  %s %s/%s  %d CPUs  load average %s at start, %s at end\n",
		time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cfg.load, loadAvg())
	sums := map[string]summary{}
	if cfg.trips > 0 {
		fmt.Fprintf(w, "\nsmall round trips: %d per pipeline after %d warm-up, in turns of %d\n", cfg.trips, cfg.warmup, cfg.block)
		fmt.Fprintf(w, "%-14s %9s %9s %9s %9s %9s\n", "pipeline", "min", "median", "p90", "p99", "max")
		for _, p := range ps {
			s := summarize(p.trips)
			sums[p.name] = s
			fmt.Fprintf(w, "%-14s %9s %9s %9s %9s %9s\n", p.name, us(s.Min), us(s.Median), us(s.P90), us(s.P99), us(s.Max))
		}
	}
	tput := map[string]float64{}
	if cfg.reps > 0 {
		fmt.Fprintf(w, "\nhuge line: %d bytes, %d per pipeline in turns; MiB/s from request write to final newline\n", cfg.hugeBytes, cfg.reps)
		fmt.Fprintf(w, "%-14s %9s  %s\n", "pipeline", "median", "each")
		for _, p := range ps {
			each := make([]string, len(p.mibps))
			for i, x := range p.mibps {
				each[i] = fmt.Sprintf("%.0f", x)
			}
			tput[p.name] = medianFloat(append([]float64(nil), p.mibps...))
			fmt.Fprintf(w, "%-14s %9.0f  %s\n", p.name, tput[p.name], strings.Join(each, " "))
		}
	}
	fmt.Fprintf(w, "\npeak RSS: VmHWM of the process itself before exit; wait4 maxrss also counts its reaped children\n")
	fmt.Fprintf(w, "%-14s %9s %9s  %s\n", "pipeline", "VmHWM", "maxrss", "ledger")
	for _, p := range ps {
		led := ""
		if p.spec.ledger != "" {
			led = fmt.Sprintf("%d records, %d records_lost, %d message_truncated", p.ledger.records, p.ledger.lost, p.ledger.truncated)
		}
		fmt.Fprintf(w, "%-14s %9s %9s  %s\n", p.name, mib(p.peak), mib(p.maxrss), led)
	}
	if ps[0].cpuTrips >= 0 {
		fmt.Fprintf(w, "\nCPU time of the pipeline's first process (user+system, 10ms ticks; less noisy than wall time on a shared machine)\n")
		fmt.Fprintf(w, "%-14s %14s %14s\n", "pipeline", "per trip", "per huge line")
		for _, p := range ps {
			trip, line := "-", "-"
			if cfg.trips > 0 {
				trip = us(p.cpuTrips / time.Duration(cfg.trips))
			}
			if cfg.reps > 0 {
				line = fmt.Sprintf("%.1fms", float64(p.cpuHuge/time.Duration(cfg.reps))/float64(time.Millisecond))
			}
			fmt.Fprintf(w, "%-14s %14s %14s\n", p.name, trip, line)
		}
	}
	fmt.Fprintf(w, "\ngoals (issue 2)\n")
	for _, p := range ps {
		if p.spec.ledger == "" {
			continue
		}
		var parts []string
		if cfg.trips > 0 {
			lat := ratio(sums[p.name].Median, sums["bare"].Median)
			parts = append(parts, fmt.Sprintf("median/bare %.2f (≤ %.1f %s)  p99/bare %.2f",
				lat, goalLatencyRatio, verdict(lat <= goalLatencyRatio), ratio(sums[p.name].P99, sums["bare"].P99)))
		}
		if cfg.reps > 0 {
			thr := tput[p.name] / tput["bare"]
			parts = append(parts, fmt.Sprintf("MiB/s / bare %.2f (≥ %.1f %s)", thr, goalThroughputRatio, verdict(thr >= goalThroughputRatio)))
		}
		rss := p.peak
		if rss == 0 {
			rss = p.maxrss
		}
		parts = append(parts, fmt.Sprintf("peak RSS %s (≤ %d MiB %s)", mib(rss), goalPeakRSS>>20, verdict(rss <= goalPeakRSS)))
		fmt.Fprintf(w, "  %-14s %s\n", p.name, strings.Join(parts, "  "))
	}
	if cfg.trips > 0 {
		fmt.Fprintf(w, "  (context: bare median/direct %.2f)\n", ratio(sums["bare"].Median, sums["direct"].Median))
	}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond)) }

func mib(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20))
}
