package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// TestTwoShimsRotateOneLedger: two shims sharing one ledger file that
// rotates every 4 KiB lose no record between them: every seq number of each
// shim is in one of the files, or counted lost. Before, two rotations in one
// millisecond renamed to the same name and the second replaced the first's
// file.
func TestTwoShimsRotateOneLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("two shims, many rotations")
	}
	const calls = 400
	dir := t.TempDir()
	lpath := filepath.Join(dir, "shared.jsonl")
	var wg sync.WaitGroup
	for i := range 2 {
		cmd := exec.Command(builtShim(t), "--name", "shared", "--quiet", "--ledger", lpath, "--ledger-max-size", "4096", "--", fixtureBin(t), "fixture", "healthy")
		cmd.Env = os.Environ()
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReader(stdout)
			fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}`+"\n", initParams)
			br.ReadString('\n')
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for n := 1; n <= calls; n++ { // one at a time: both shims write all along
				fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"shim %d"}}}`+"\n", n, i)
				if _, err := br.ReadString('\n'); err != nil {
					t.Errorf("shim %d, call %d: %v", i, n, err)
					break
				}
			}
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("shim %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "shared*.jsonl"))
	seqs := map[string]map[uint64]bool{}
	lost := map[string]int64{}
	for _, f := range files {
		for _, e := range readLedger(t, f) {
			if seqs[e.Shim] == nil {
				seqs[e.Shim] = map[uint64]bool{}
			}
			seqs[e.Shim][e.Seq] = true
			if e.Event == ledger.RecordsLost {
				n, _ := e.Int("count")
				lost[e.Shim] += n
			}
		}
	}
	if len(seqs) != 2 {
		t.Fatalf("got records of %d shims in %d files, want 2", len(seqs), len(files))
	}
	for shim, got := range seqs {
		var last uint64
		for s := range got {
			last = max(last, s)
		}
		if missing := int64(last) - int64(len(got)) - lost[shim]; missing != 0 {
			t.Errorf("shim %s: %d of seq 1..%d in %d files, %d counted lost: %d records lost uncounted", shim, len(got), last, len(files), lost[shim], missing)
		}
	}
	t.Logf("%d files", len(files))
}
