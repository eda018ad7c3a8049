//go:build !windows

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestStderrUnreadStallsNothing: a client that never reads the shim's
// stderr (a pipe it keeps open and never drains) makes 20,000 calls and
// closes stdin. The shim exits by itself; its ledger holds the session's
// end (client_disconnected, exited) whatever the console lost, every lost
// record is counted, and the verdict is not that the shim was killed. The
// time from the client's EOF to the shim's exit is logged: the shutdown
// bound README states. Before the fix the shim was still running 8 s after
// stdin closed, with no exited and no client_disconnected in its ledger.
func TestStderrUnreadStallsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 calls")
	}
	const calls = 20000
	cmd, lpath := shimCmd(t, []string{"--kill-grace", "2s"}, fixtureBin(t), "fixture", "healthy")
	unread, stderr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer unread.Close() // read by nobody while the shim runs
	cmd.Stderr = stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr.Close()
	answers := make(chan int, 1)
	go func() { // the client reads its answers as they come
		n := 0
		br := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := br.ReadString('\n')
			if strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`) {
				n++
			}
			if err != nil {
				answers <- n
				return
			}
		}
	}()
	bw := bufio.NewWriter(stdin)
	fmt.Fprintln(bw, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(bw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"call %d"}}}`+"\n", i, i)
	}
	if err := bw.Flush(); err != nil {
		t.Fatalf("send %d calls: %v", calls, err)
	}
	stdin.Close()
	eof := time.Now()
	exited := make(chan error, 1)
	go func() {
		n := <-answers
		exited <- fmt.Errorf("%d answers", n)
		exited <- cmd.Wait()
	}()
	var got string
	select {
	case e := <-exited:
		got = e.Error()
	case <-time.After(2 * time.Minute):
		t.Fatalf("stdout still open 2m after the client's EOF (stderr unread)")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("shim: got %v, want exit 0", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("shim still running 2m after the client's EOF (stderr unread)")
	}
	took := time.Since(eof)
	t.Logf("shim exited %v after the client's EOF with stderr unread (--kill-grace 2s), %s of %d calls", took.Round(time.Millisecond), got, calls+1)
	if want := fmt.Sprintf("%d answers", calls+1); got != want {
		t.Errorf("client got %s, want %s", got, want)
	}

	entries := readLedger(t, lpath)
	var ends = map[string]int{}
	var lost int64
	var recorded int
	var last uint64
	for _, e := range entries {
		ends[e.Event]++
		if e.Event == "records_lost" {
			if n, ok := e.Int("count"); ok {
				lost += n
			}
		}
		recorded++
		last = max(last, e.Seq)
	}
	for _, ev := range []string{phases.ClientDisconnected, phases.Exited} {
		if ends[ev] != 1 {
			t.Errorf("ledger: got %d %s, want 1", ends[ev], ev)
		}
	}
	// Every seq number is a record in the file or one counted lost.
	if int64(last) != int64(recorded)+lost {
		t.Errorf("ledger: last seq %d, %d records and %d counted lost: %d unaccounted", last, recorded, lost, int64(last)-int64(recorded)-lost)
	}
	t.Logf("ledger: %d records, %d counted lost", recorded, lost)
	why, errs, code := runLedgerCmd(t, "why", lpath)
	if code != 0 || strings.Contains(why, "killed") || strings.Contains(why, "UNRECORDED") {
		t.Errorf("ledger why: exit %d, got\n%s%s\nwant a verdict without \"killed\"", code, why, errs)
	}
	// What the console kept, read now that the shim is gone.
	unread.SetReadDeadline(time.Now().Add(5 * time.Second))
	console, _ := io.ReadAll(unread)
	t.Logf("stderr: %d bytes kept for the client", len(console))
}

// TestSoftLimitFollowsMaxObserve: the GC's soft limit is 24 MiB at the
// default --max-observe and grows by two observed lines past it (before, a
// fixed 24 MiB sat beside --max-observe 1 GiB).
func TestSoftLimitFollowsMaxObserve(t *testing.T) {
	for _, tc := range []struct {
		maxObserve int
		want       int64
	}{
		{64 << 10, 24 << 20},
		{16 << 20, 24 << 20},
		{32 << 20, 56 << 20},
		{1 << 30, 24<<20 + 2*(1<<30-16<<20)},
	} {
		if got := softLimit(tc.maxObserve); got != tc.want {
			t.Errorf("softLimit(%d): got %d, want %d", tc.maxObserve, got, tc.want)
		}
	}
}
