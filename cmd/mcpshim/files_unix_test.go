//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerDirectoryOthersCanWrite: a ledger directory of ours that others
// can write is repaired and said so; one of another user's is refused, and
// the session carries on without it.
func TestLedgerDirectoryOthersCanWrite(t *testing.T) {
	t.Run("ours", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ledgers")
		os.Mkdir(dir, 0o777)
		os.Chmod(dir, 0o777)
		s := start(t, true, []string{"--ledger", dir}, "fixture", "healthy")
		legacySession(s)
		if status := s.finish(); status != 0 {
			t.Fatalf("shim exit status %d, want 0; stderr:\n%s", status, s.stderr)
		}
		if st, _ := os.Stat(dir); st.Mode().Perm() != 0o755 {
			t.Errorf("directory mode %v after the shim, want 0755", st.Mode().Perm())
		}
		if got := lines(s.stderr.String(), "writable by other users"); len(got) != 1 || !strings.Contains(got[0], "made it 0755") {
			t.Errorf("stderr lines about the directory: %q, want one saying it was made 0755", got)
		}
		s.ledger = filepath.Join(dir, "test.jsonl")
		if find(s.entries(), "tool_call_responded") == nil {
			t.Errorf("the repaired directory's ledger has no tool_call_responded")
		}
	})
	t.Run("theirs", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ledgers")
		os.Mkdir(dir, 0o777)
		os.Chmod(dir, 0o777)
		asAnotherUser(t, dir)
		s := start(t, true, []string{"--ledger", dir}, "fixture", "healthy")
		legacySession(s)
		if status := s.finish(); status != 0 {
			t.Fatalf("shim exit status %d, want 0; stderr:\n%s", status, s.stderr)
		}
		if got := lines(s.stderr.String(), "belongs to another user"); len(got) != 1 {
			t.Errorf("stderr lines about the directory: %q, want one refusal\n%s", got, s.stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, "test.jsonl")); err == nil {
			t.Errorf("a ledger was written in another user's directory")
		}
	})
}
