package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLedgerNewDirectory: --ledger naming a directory that does not exist
// yet, without a trailing slash, makes the directory and NAME.jsonl in it
// rather than a file of that name; a .jsonl name is a file.
func TestLedgerNewDirectory(t *testing.T) {
	shim := builtShim(t)
	dir := t.TempDir()
	for _, tt := range []struct{ flag, want string }{
		{filepath.Join(dir, "logs"), filepath.Join(dir, "logs", "fx.jsonl")},
		{filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "one.jsonl")},
	} {
		// The client leaves at once (stdin is empty): the shim records the run and ends.
		runBuilt(t, dir, []string{"PATH=" + systemPath(), "HOME=" + dir}, "--name", "fx", "--ledger", tt.flag, "--", shim, "fixture", "healthy")
		if fi, err := os.Stat(tt.want); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
			t.Errorf("--ledger %s: %s is %v, %v; want the ledger file there", tt.flag, tt.want, fi, err)
		}
	}
}
