//go:build !windows

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestBadShebang: a script whose #! interpreter is missing is not a missing
// command: 126 and bad_interpreter naming the interpreter, as bash says.
func TestBadShebang(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/nonexistent/node --flag\nconsole.log(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lpath := filepath.Join(dir, "l.jsonl")
	tests := []struct {
		command          string
		status           int
		class, hintWants string
	}{
		{script, 126, "bad_interpreter", "/nonexistent/node"},
		{filepath.Join(dir, "absent"), 127, "not_found", "absolute path"},
	}
	for _, tt := range tests {
		os.Remove(lpath)
		status, _, stderr := runBinary(t, nil, "", "--ledger", lpath, "--", tt.command)
		if status != tt.status {
			t.Errorf("mcpshim -- %s: status %d, want %d; stderr:\n%s", tt.command, status, tt.status, stderr)
		}
		data, _ := os.ReadFile(lpath)
		var failed *ledger.Entry
		for _, line := range bytes.Split(data, []byte("\n")) {
			if e, err := ledger.Decode(line); err == nil && e.Event == phases.SpawnFailed {
				failed = &e
			}
		}
		if failed == nil {
			t.Fatalf("mcpshim -- %s: no spawn_failed in the ledger:\n%s", tt.command, data)
		}
		if got := failed.Str("error_class"); got != tt.class || !strings.Contains(failed.Str("hint"), tt.hintWants) {
			t.Errorf("mcpshim -- %s: spawn_failed error_class=%q hint=%q, want %q and a hint naming %q", tt.command, got, failed.Str("hint"), tt.class, tt.hintWants)
		}
	}
}
