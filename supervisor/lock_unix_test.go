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
	"strings"
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
//
// The order is made by events, not by the drain's grace: the client stops
// reading one byte short of the first answer's end, so the relay holds the
// wire with that answer's newline in hand (and the drain waits for it); only
// then does the client send the request the server exits after, and it reads
// on once the grandchild saw the server reaped and said so on stderr.
func TestLockEnforceManyViolationsWhileDraining(t *testing.T) {
	const n = 20
	const wait = 60 * time.Second // generous: the machine may be busy
	const answer = `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"},"description":"`
	const desc, tail = 1200000, `"}]}}` + "\n"
	first := len(fmt.Sprintf(answer, "1")) + desc + len(tail)
	// The server reads all requests but the last, starts the grandchild and
	// exits after the last. The grandchild ignores SIGTERM and writes the
	// first answer at once, the others only once its parent was reaped.
	script := fmt.Sprintf(`i=1; while [ $i -lt %d ]; do read l; i=$((i+1)); done
parent=$$
( trap '' TERM
  i=1; while [ $i -le %d ]; do
    printf '%s' $i
    head -c %d /dev/zero | tr '\0' d; printf '%s\n'
    if [ $i -eq 1 ]; then
      while kill -0 $parent 2>/dev/null; do sleep 0.01; done
      echo "server gone" >&2
    fi
    i=$((i+1))
  done ) &
read l
exit 0`, n, n, answer, desc, strings.TrimSuffix(tail, "\n"))
	lg, err := ledger.Open(ledger.Options{Path: filepath.Join(t.TempDir(), "l.jsonl"), Server: "lock"})
	if err != nil {
		t.Fatal(err)
	}
	rec := tap.NewRecorder(lg, &tap.Tracker{}, tap.RecorderOptions{})
	defer rec.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	defer errW.Close()
	gone := make(chan struct{})
	// The shim's stderr: returns when the shim is done with it.
	go func() {
		br := bufio.NewReader(errR)
		for said := false; ; {
			line, err := br.ReadString('\n')
			if !said && strings.Contains(line, "server gone") {
				said = true
				close(gone)
			}
			if err != nil {
				return
			}
		}
	}()
	done := make(chan int, 1)
	// The shim: returns when the session ends.
	go func() {
		done <- Run(ctx, Config{Name: "lock", Spec: proc.Spec{Path: "sh", Args: []string{"-c", script}},
			Recorder: rec, ClientIn: inR, ClientOut: outW, Stderr: errW, Policy: DefaultPolicy(),
			CheckTools: func([]json.RawMessage) []string { return []string{"locked"} }, EnforceLock: true})
		outW.Close()
	}()
	held := make(chan struct{})
	// The client: returns when it has written its requests (or the pipe broke).
	go func() {
		for i := 1; i <= n; i++ {
			if i == n {
				<-held
			}
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`+"\n", i)
		}
	}()
	head := make([]byte, first-1)
	headRead := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(outR, head)
		headRead <- err
	}()
	select {
	case err := <-headRead:
		if err != nil {
			t.Fatalf("reading the first answer: %v", err)
		}
	case <-time.After(wait):
		t.Fatalf("no first answer within %v", wait)
	}
	close(held)
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatalf("the server was not gone within %v of its last request", wait)
	}
	seen := map[string]int{}
	read := make(chan struct{})
	// The client's reader: returns at the shim's EOF.
	go func() {
		defer close(read)
		br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), outR), 1<<20)
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
	case <-time.After(wait):
		t.Fatalf("the shim did not end within %v of a broken lock", wait)
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
