//go:build !windows

package supervisor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/tap"
)

// TestReviewCrashLoopFloodOneAnswerEach runs the supervisor in process (so
// that -race sees both goroutines) in front of a real server that answers
// initialize and dies on the next request, while the client floods requests:
// the relay answers the ones past the hold's bounds during the restart delays
// while the loop records the dead child's cause. Every request gets exactly
// one answer.
func TestReviewCrashLoopFloodOneAnswerEach(t *testing.T) {
	script := `while IFS= read -r l; do
  id=$(printf '%s' "$l" | sed -n 's/.*"id":\([^,}]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$l" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}\n' "$id";;
  *) echo "fatal: crashed on $id" >&2; exit 1;;
  esac
done`
	ledger, _ := ledger.Open(ledger.Options{Path: filepath.Join(t.TempDir(), "l.jsonl"), Server: "loop"})
	rec := tap.NewRecorder(ledger, &tap.Tracker{}, tap.RecorderOptions{})
	defer rec.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	policy := DefaultPolicy()
	policy.Backoff, policy.MaxRestarts = 20*time.Millisecond, 1000
	done := make(chan int, 1)
	// The shim: returns when the session ends.
	go func() {
		done <- Run(context.Background(), Config{Name: "loop", Spec: proc.Spec{Path: "sh", Args: []string{"-c", script}},
			Recorder: rec, ClientIn: inR, ClientOut: outW, Stderr: io.Discard, Policy: policy})
		outW.Close()
	}()
	const n = 3000
	// The client: returns when it has written its requests.
	go func() {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
	}()
	seen := map[string]int{}
	br := bufio.NewReaderSize(outR, 1<<20)
	for total := 0; total < n+1; {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", total, err)
		}
		if m := mcp.Peek(line[:len(line)-1]); m.IsResponse() {
			seen[string(m.RawID)]++
			total++
		}
	}
	inW.Close()
	go io.Copy(io.Discard, br) // returns at the shim's EOF
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the supervisor did not end 60s after the client left")
	}
	for i := 0; i <= n; i++ {
		if id := fmt.Sprint(i); seen[id] != 1 {
			t.Errorf("id %s: %d answers, want 1", id, seen[id])
		}
	}
}
