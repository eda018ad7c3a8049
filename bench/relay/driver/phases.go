package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/bench/relay/progress"
)

// pipelined sends n small tools/call requests with depth of them in flight
// and times each from its write to its response's newline. The echo server
// answers in order; the relay in front of it may interleave nothing else.
func (p *pipeline) pipelined(n, depth int) error {
	base := p.id + 1
	p.id += n
	sent := make([]atomic.Int64, n) // UnixNano of each write, read by the reader
	slots := make(chan struct{}, depth)
	werr := make(chan error, 1)
	// The writer: exits after the last request or the first failed write.
	go func() {
		var buf []byte
		for i := range n {
			slots <- struct{}{}
			buf = fmt.Appendf(buf[:0], echoCall+"\n", base+i)
			sent[i].Store(time.Now().UnixNano())
			if _, err := p.in.Write(buf); err != nil {
				werr <- fmt.Errorf("%s: write request %d: %w", p.name, base+i, err)
				return
			}
		}
		werr <- nil
	}()
	t0 := time.Now()
	for range n {
		line, err := p.out.ReadSlice('\n')
		now := time.Now().UnixNano()
		if err != nil {
			return fmt.Errorf("%s: read pipelined response: %w", p.name, err)
		}
		id, ok := idNumber(line)
		if !ok || id < base || id >= base+n {
			return fmt.Errorf("%s: pipelined response %q: want an id in [%d, %d)", p.name, line, base, base+n)
		}
		p.inflight = append(p.inflight, time.Duration(now-sent[id-base].Load()))
		<-slots
	}
	p.rps = append(p.rps, float64(n)/time.Since(t0).Seconds())
	return <-werr
}

// idNumber reads the numeric id of a response line.
func idNumber(line []byte) (int, bool) {
	_, rest, ok := bytes.Cut(line, []byte(`"id":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(string(rest[:end]))
	return id, err == nil
}

const floodCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flood","arguments":{"lines":%d,"bytes":%d}}}` + "\n"

// flood sends lines progress notifications of size bytes one way: "s2c"
// asks the server for them (then its answer), "c2s" writes them to the
// server (then a request). It records MiB/s from the first write to the
// answer's newline, and the first process's CPU time over the flood (read
// again after settle, so the recorder's work after the last line counts).
func (p *pipeline) flood(dir string, lines, size int, settle time.Duration) error {
	cpu0, cerr := cpuTime(p.cmd.Process.Pid)
	t0 := time.Now()
	var d time.Duration
	if dir == "s2c" {
		p.id++
		if _, err := fmt.Fprintf(p.in, floodCall, p.id, lines, size); err != nil {
			return fmt.Errorf("%s: write flood request: %w", p.name, err)
		}
		got := 0
		for {
			line, err := p.out.ReadSlice('\n')
			if err != nil {
				return fmt.Errorf("%s: read flood after %d lines: %w", p.name, got, err)
			}
			if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`)) {
				got++
				continue
			}
			if id, _ := idNumber(line); id != p.id || got != lines {
				return fmt.Errorf("%s: flood answer %q after %d lines: want id %d after %d", p.name, line, got, p.id, lines)
			}
			break
		}
		d = time.Since(t0)
	} else {
		one := progress.Line(size)
		block := bytes.Repeat(one, 256)
		for sent := 0; sent < lines; {
			k := min(256, lines-sent)
			if _, err := p.in.Write(block[:k*len(one)]); err != nil {
				return fmt.Errorf("%s: write flood after %d lines: %w", p.name, sent, err)
			}
			sent += k
		}
		if _, err := p.exchange(echoCall); err != nil {
			return err
		}
		d = time.Since(t0)
	}
	mibps := float64(lines*size) / (1 << 20) / d.Seconds()
	time.Sleep(settle)
	cpu1, cerr2 := cpuTime(p.cmd.Process.Pid)
	cpu := time.Duration(-1)
	if cerr == nil && cerr2 == nil {
		cpu = (cpu1 - cpu0) * 100000 / time.Duration(lines)
	}
	if dir == "s2c" {
		p.floodS2C, p.floodCPUS2C = mibps, cpu
	} else {
		p.floodC2S, p.floodCPUC2S = mibps, cpu
	}
	return nil
}

// hugeRequest writes one tools/call request line of size bytes and times
// it from the first byte written to the answer's newline.
func (p *pipeline) hugeRequest(size int) (time.Duration, error) {
	p.id++
	head := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sink","arguments":{"data":"`, p.id)
	tail := []byte("\"}}}\n")
	pad := size - len(head) - len(tail)
	if pad < 0 {
		return 0, fmt.Errorf("huge request: %d bytes is too small", size)
	}
	chunk := bytes.Repeat([]byte{'y'}, 1<<20)
	t0 := time.Now()
	if _, err := p.in.Write(head); err != nil {
		return 0, fmt.Errorf("%s: write huge request: %w", p.name, err)
	}
	for pad > 0 {
		n := min(pad, len(chunk))
		if _, err := p.in.Write(chunk[:n]); err != nil {
			return 0, fmt.Errorf("%s: write huge request: %w", p.name, err)
		}
		pad -= n
	}
	if _, err := p.in.Write(tail); err != nil {
		return 0, fmt.Errorf("%s: write huge request: %w", p.name, err)
	}
	line, err := p.out.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || err != nil {
		return 0, fmt.Errorf("%s: read huge request's answer: %v", p.name, err)
	}
	if id, _ := idNumber(line); id != p.id {
		return 0, fmt.Errorf("%s: huge request's answer %q: want id %d", p.name, line, p.id)
	}
	return time.Since(t0), nil
}
