// Command driver measures, in one run, what a relay in front of a stdio MCP
// server costs, for every row of issue 14's table: small round trips, 32
// requests in flight, a flood of 1 KiB lines each way, one huge line each
// way, peak and idle memory, exec to the first byte of the initialize
// answer, package init and binary size. The pipelines are a direct pipe, a
// bare io.Copy relay, mcpshim with its ledger on and, when given, the peer
// mcpsnoop with its trace on and off. All are alive at once and take turns
// (a block of trips, one flood, one huge line each), so that load from
// others on a shared machine falls on all of them alike.
//
// With -summary it reads the rows.tsv of earlier runs instead and prints the
// table: medians and ranges over the runs, ratios to the bare relay.
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
	"time"
)

// config is the driver's flags.
type config struct {
	echo, bare, shim, snoop string
	trips, warmup           int
	block                   int // trips of one pipeline before the next one's turn
	depth, inflightN        int // requests in flight, and requests per pipeline
	floodBytes, floodLine   int // bytes of 1 KiB lines per flood, and the line size
	hugeBytes, reps         int
	starts                  int // fresh starts per pipeline for exec to first byte
	inits                   int // GODEBUG=inittrace=1 runs per binary
	work                    string
	settle, pause           time.Duration
	load                    string // load average when the run started
}

func main() {
	var cfg config
	var summary bool
	flag.StringVar(&cfg.echo, "echo", "", "the echo server binary (required)")
	flag.StringVar(&cfg.bare, "bare", "", "the bare relay binary (required)")
	flag.StringVar(&cfg.shim, "shim", "", "the mcpshim binary; empty measures only direct and bare")
	flag.StringVar(&cfg.snoop, "mcpsnoop", "", "a build of kerlenton/mcpsnoop, measured with its trace on and off")
	flag.IntVar(&cfg.trips, "n", 5000, "small round trips per pipeline")
	flag.IntVar(&cfg.block, "block", 250, "round trips of one pipeline before the next pipeline's turn")
	flag.IntVar(&cfg.warmup, "warmup", 200, "round trips per pipeline before measuring, not counted")
	flag.IntVar(&cfg.depth, "inflight", 32, "requests in flight at once")
	flag.IntVar(&cfg.inflightN, "inflight-n", 20000, "requests per pipeline with -inflight in flight (two turns each)")
	flag.IntVar(&cfg.floodBytes, "flood", 1<<30, "bytes of progress notification lines per flood, one each way per pipeline")
	flag.IntVar(&cfg.floodLine, "flood-line", 1024, "bytes of one flood line, newline included")
	flag.IntVar(&cfg.hugeBytes, "huge", 64<<20, "bytes of the huge line, newline included")
	flag.IntVar(&cfg.reps, "reps", 5, "huge lines per pipeline each way (the median is reported)")
	flag.IntVar(&cfg.starts, "starts", 21, "fresh starts per pipeline, timed from exec to the first byte of the initialize answer")
	flag.IntVar(&cfg.inits, "inits", 5, "GODEBUG=inittrace=1 runs per binary (the median is reported)")
	flag.StringVar(&cfg.work, "work", "", "directory for ledgers, stderr logs and rows.tsv (default: a new temporary one)")
	flag.DurationVar(&cfg.settle, "settle", 300*time.Millisecond, "wait after each phase before reading CPU time and memory, so the recorder has handled its lines")
	flag.DurationVar(&cfg.pause, "pause", 50*time.Millisecond, "wait after each huge line or flood before the next pipeline's")
	flag.BoolVar(&summary, "summary", false, "print the table of the rows.tsv files given as arguments")
	flag.Parse()
	if summary {
		if err := summarize(os.Stdout, flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "driver: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if cfg.block <= 0 {
		cfg.block = 1
	}
	if cfg.echo == "" || cfg.bare == "" {
		fmt.Fprintln(os.Stderr, "usage: driver -echo ECHO -bare BARE [-shim MCPSHIM] [-mcpsnoop MCPSNOOP] [flags]\n       driver -summary ROWS.tsv...")
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
	ss := specs(cfg)
	ps, err := run(cfg, ss)
	if err != nil {
		fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		os.Exit(1)
	}
	rows := collect(cfg, ps)
	sr, err := startup(cfg, ss)
	if err != nil {
		fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		os.Exit(1)
	}
	rows = append(rows, sr...)
	report(os.Stdout, cfg, ps, rows)
	if err := writeRows(filepath.Join(cfg.work, "rows.tsv"), rows); err != nil {
		fmt.Fprintf(os.Stderr, "driver: %v\n", err)
		os.Exit(1)
	}
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
	if cfg.shim != "" {
		ledger := filepath.Join(cfg.work, "mcpshim.jsonl")
		out = append(out, spec{name: "mcpshim", argv: []string{cfg.shim, "--name", "mcpshim", "--ledger", ledger, "--", cfg.echo}, ledger: ledger})
	}
	if cfg.snoop != "" {
		out = append(out,
			spec{name: "mcpsnoop", argv: []string{cfg.snoop, "--label", "mcpsnoop", "--trace-file", filepath.Join(cfg.work, "mcpsnoop.jsonl"), "--", cfg.echo}},
			spec{name: "mcpsnoop-off", argv: []string{cfg.snoop, "--no-trace", "--", cfg.echo}})
	}
	return out
}

// command is s's process with its stderr appended to a log in work and a
// home of its own there (mcpsnoop keeps its state and socket under it).
func command(s spec, work string) (*exec.Cmd, error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home, "XDG_CACHE_HOME="+home, "XDG_RUNTIME_DIR="+home)
	errLog, err := os.OpenFile(filepath.Join(work, s.name+".stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	cmd.Stderr = errLog // closed by the caller once started
	return cmd, nil
}

// pipeline is one running spec and what was measured through it.
type pipeline struct {
	spec
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	id    int
	buf   []byte
	trips []time.Duration

	inflight []time.Duration // latency of each request with depth in flight
	rps      []float64       // requests per second, one per turn

	floodS2C, floodC2S       float64       // MiB/s
	floodCPUS2C, floodCPUC2S time.Duration // CPU of the first process per flood; -1 unknown

	hugeS2C, hugeC2S []float64 // MiB/s, one per huge line
	idle             int64     // VmRSS after the handshake
	peakS2C, peakC2S int64     // VmHWM after the server's huge lines, and after the client's too
	ledger           ledgerStats
}

type ledgerStats struct {
	records, lost, truncated int
}

func start(s spec, work string) (*pipeline, error) {
	cmd, err := command(s, work)
	if err != nil {
		return nil, err
	}
	defer cmd.Stderr.(*os.File).Close() // the child has its own copy
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
	return &pipeline{spec: s, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 256<<10), floodCPUS2C: -1, floodCPUC2S: -1}, nil
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
	time.Sleep(cfg.settle)
	for _, p := range ps {
		p.idle, _ = procStatus(p.cmd.Process.Pid, "VmRSS:")
	}
	for range cfg.warmup {
		for _, p := range ps {
			if _, err := p.exchange(echoCall); err != nil {
				return nil, err
			}
		}
	}
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
	for turn := range 2 {
		for _, p := range ps {
			n := cfg.inflightN / 2
			if turn == 1 {
				n = cfg.inflightN - n
			}
			if err := p.pipelined(n, cfg.depth); err != nil {
				return nil, err
			}
		}
	}
	if cfg.floodBytes > 0 {
		lines := max(cfg.floodBytes/cfg.floodLine, 1)
		for _, dir := range []string{"s2c", "c2s"} {
			for _, p := range ps {
				time.Sleep(cfg.settle) // the recorder's backlog belongs to the phase before
				if err := p.flood(dir, lines, cfg.floodLine, cfg.settle); err != nil {
					return nil, err
				}
				time.Sleep(cfg.pause)
			}
		}
	}
	for _, dir := range []string{"s2c", "c2s"} {
		for range cfg.reps {
			for _, p := range ps {
				var d time.Duration
				var err error
				if dir == "s2c" {
					d, err = p.huge(cfg.hugeBytes)
				} else {
					d, err = p.hugeRequest(cfg.hugeBytes)
				}
				if err != nil {
					return nil, err
				}
				x := float64(cfg.hugeBytes) / (1 << 20) / d.Seconds()
				if dir == "s2c" {
					p.hugeS2C = append(p.hugeS2C, x)
				} else {
					p.hugeC2S = append(p.hugeC2S, x)
				}
				time.Sleep(cfg.pause) // the same reason as the blocks above
			}
		}
		time.Sleep(cfg.settle)
		for _, p := range ps {
			peak, _ := procStatus(p.cmd.Process.Pid, "VmHWM:")
			if dir == "s2c" {
				p.peakS2C = peak
			} else {
				p.peakC2S = peak
			}
		}
	}
	for _, p := range ps {
		p.in.Close()
		if err := p.cmd.Wait(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
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

func readLedger(path string) (ledgerStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return ledgerStats{}, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	var st ledgerStats
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && !errors.Is(err, bufio.ErrBufferFull) {
			st.records++
		}
		if bytes.Contains(line, []byte(`"event":"records_lost"`)) {
			st.lost++
		}
		if bytes.Contains(line, []byte(`"event":"message_truncated"`)) {
			st.truncated++
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return st, nil
		}
	}
}
