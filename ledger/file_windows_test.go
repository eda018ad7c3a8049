package ledger_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestDeletedWhileOpenWindows: a ledger deleted by hand while the shim holds
// it is let go, and the path gets a new file, also where Windows deletes
// the old way (the name stays, delete pending, until the last handle
// closes: wine does so).
func TestDeletedWhileOpenWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fs.jsonl")
	var said bytes.Buffer
	l, err := ledger.Open(ledger.Options{Path: path, Shim: "shim_1", Server: "fs", Events: &said})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write := func() { l.Write(&ledger.Record{Run: "run_1", Phase: phases.Launch, Event: phases.Spawned}) }
	write()
	if err := os.Remove(path); err != nil {
		t.Fatalf("remove the open ledger: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(said.String(), "was deleted or replaced"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30s after the ledger was deleted it still writes to the deleted file; it said:\n%s", said.String())
		}
		write()
	}
	write()
	if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte(`"event":"spawned"`)) {
		t.Errorf("the new file at %s: %q, %v; want the records written after the reopen", path, b, err)
	}
}
