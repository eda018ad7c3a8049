package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// startup measures the start-up rows for every spec but direct: exec to the
// first byte of the initialize answer (fresh processes, in turns), package
// init under GODEBUG=inittrace=1, and the binary's size.
func startup(cfg config, ss []spec) ([]row, error) {
	var rows []row
	firsts := map[string][]time.Duration{}
	for range cfg.starts {
		for _, s := range ss {
			d, err := firstByte(s, cfg.work)
			if err != nil {
				return nil, err
			}
			firsts[s.name] = append(firsts[s.name], d)
		}
	}
	for _, s := range ss {
		if len(firsts[s.name]) > 0 {
			rows = append(rows, row{"first_byte", s.name, ms(stats(firsts[s.name]).Median)})
		}
		if s.name == "direct" {
			continue
		}
		var inits []float64
		var pkgs int
		for range cfg.inits {
			clock, n, err := initTrace(s.argv[0])
			if err != nil {
				return nil, err
			}
			inits, pkgs = append(inits, clock), n
		}
		if len(inits) > 0 {
			rows = append(rows, row{"init_ms", s.name, medianFloat(inits)}, row{"init_pkgs", s.name, float64(pkgs)})
		}
		if fi, err := os.Stat(s.argv[0]); err == nil {
			m := "binary_mb"
			if !stripped(s.argv[0]) {
				m = "binary_mb_unstripped"
			}
			rows = append(rows, row{m, s.name, float64(fi.Size()) / 1e6})
		}
	}
	return rows, nil
}

// firstByte starts s afresh, writes initialize at once and times from just
// before the exec to the first byte of the answer.
func firstByte(s spec, work string) (time.Duration, error) {
	cmd, err := command(s, work)
	if err != nil {
		return 0, err
	}
	defer cmd.Stderr.(*os.File).Close()
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	req := fmt.Appendf(nil, initialize+"\n", 1)
	var b [1]byte
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("spawn %s: %w", s.name, err)
	}
	_, werr := in.Write(req)
	_, rerr := io.ReadFull(out, b[:])
	d := time.Since(t0)
	in.Close()
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil || werr != nil || rerr != nil {
		return 0, fmt.Errorf("%s: first byte: write %v, read %v, exit %v", s.name, werr, rerr, err)
	}
	return d, nil
}

// initTrace runs bin --version with GODEBUG=inittrace=1 and sums the clock
// time of its packages' init, in ms, and counts the packages.
func initTrace(bin string) (float64, int, error) {
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the bare relay's usage exits 64: its init ran all the same
	var sum float64
	n := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("inittrace of %s: %q: %w", bin, sc.Text(), err)
		}
		sum += v
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("inittrace of %s: no init lines in %q", bin, stderr.String())
	}
	return sum, n, nil
}

// stripped reports whether the ELF binary has no symbol table.
func stripped(bin string) bool {
	f, err := elf.Open(bin)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".symtab") == nil
}
