//go:build !windows

package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// TestLockEnforceManyViolationsWhileDraining: an enforced lock broken by
// more tools/list answers than the loop's event queue holds, each longer
// than the hold (so streamed, the client's wire held while Route runs), and
// written by a grandchild once the server process is gone: the loop is
// draining and reads no events. The stdout relay must not block on its
// handoff to the loop: the shim ends with 78 and every request has one answer.
func TestLockEnforceManyViolationsWhileDraining(t *testing.T) {
	const n = 20
	// The grandchild ignores SIGTERM and writes only once its parent was reaped.
	script := fmt.Sprintf(`i=1; while [ $i -le %d ]; do read l; i=$((i+1)); done
parent=$$
( trap '' TERM
  while kill -0 $parent 2>/dev/null; do sleep 0.01; done
  i=1; while [ $i -le %d ]; do
    printf '{"jsonrpc":"2.0","id":%%s,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"},"description":"' $i
    head -c 1200000 /dev/zero | tr '\0' d; printf '"}]}}\n'; i=$((i+1))
  done ) &
exit 0`, n, n)
	lg, err := ledger.Open(ledger.Options{Path: filepath.Join(t.TempDir(), "l.jsonl"), Server: "lock"})
	if err != nil {
		t.Fatal(err)
	}
	rec := tap.NewRecorder(lg, &tap.Tracker{}, tap.RecorderOptions{})
	defer rec.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	// The shim: returns when the session ends.
	go func() {
		done <- Run(context.Background(), Config{Name: "lock", Spec: proc.Spec{Path: "sh", Args: []string{"-c", script}},
			Recorder: rec, ClientIn: inR, ClientOut: outW, Stderr: io.Discard, Policy: DefaultPolicy(),
			CheckTools: func([]json.RawMessage) []string { return []string{"locked"} }, EnforceLock: true})
		outW.Close()
	}()
	// The client: returns when it has written its requests (or the pipe broke).
	go func() {
		for i := 1; i <= n; i++ {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`+"\n", i)
		}
	}()
	seen := map[string]int{}
	read := make(chan struct{})
	// The client's reader: returns at the shim's EOF.
	go func() {
		defer close(read)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if m := mcp.Peek(bytes.TrimSuffix(line, []byte("\n"))); m.IsResponse() && !m.Partial {
				seen[string(m.RawID)]++
			}
			if err != nil {
				return
			}
		}
	}()
	var status int
	select {
	case status = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the shim did not end within 60s of a broken lock")
	}
	<-read
	inW.Close()
	if status != lock.ExitConfig {
		t.Errorf("exit status %d, want %d", status, lock.ExitConfig)
	}
	for i := 1; i <= n; i++ {
		if id := fmt.Sprint(i); seen[id] != 1 {
			t.Errorf("id %s: %d answers, want 1", id, seen[id])
		}
	}
}
