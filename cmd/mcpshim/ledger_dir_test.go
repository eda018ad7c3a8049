package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerDefaultDirAbsolute: a client may start the shim with no HOME (or a
// relative one) in any working directory; the default ledger directory is
// still absolute, not a path under that directory.
func TestLedgerDefaultDirAbsolute(t *testing.T) {
	for _, env := range [][]string{nil, {"HOME=", "XDG_STATE_HOME=", "LOCALAPPDATA=", "USERPROFILE="}, {"HOME=h", "XDG_STATE_HOME=s", "LOCALAPPDATA=l"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"ledger", "--help"}, env, strings.NewReader(""), &out, &errb)
		_, rest, _ := strings.Cut(out.String(), "by default\n")
		dir, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		if code != 0 || !filepath.IsAbs(dir) || !strings.Contains(dir, "mcpshim") {
			t.Errorf("ledger --help with env %q: got exit %d, default dir %q, want 0 and an absolute path", env, code, dir)
		}
	}
}
