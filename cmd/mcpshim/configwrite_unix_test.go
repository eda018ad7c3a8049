//go:build !windows

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestWrapAsRootKeepsOwner: root wrapping a user's 0600 config leaves it the
// user's, with its group and mode; the backup is in the state directory,
// not beside the config, and unwrap's backup never replaces wrap's.
func TestWrapAsRootKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the defect is root (sudo) taking a user's file over; CI runs as root")
	}
	home := publicDir(t)
	file := filepath.Join(home, ".mcp.json")
	os.WriteFile(file, []byte(oneServer), 0o600)
	os.Chmod(file, 0o600)
	os.Chown(file, nobody, nobody+1)
	for _, cmd := range []string{"wrap", "unwrap"} {
		if code, out := runIn(t, home, builtShim(t), cmd, "--config", file); code != 0 {
			t.Fatalf("%s: exit %d\n%s", cmd, code, out)
		}
		st, _ := os.Stat(file)
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != nobody || sys.Gid != nobody+1 || st.Mode().Perm() != 0o600 {
			t.Errorf("after %s as root: uid %d gid %d mode %v; want %d %d 0600", cmd, sys.Uid, sys.Gid, st.Mode().Perm(), nobody, nobody+1)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != oneServer {
		t.Errorf("after wrap and unwrap: %q, want the original", b)
	}
	if got := readWrapFile(t, onlyBackup(t, home, "wrap")); got != oneServer {
		t.Errorf("wrap's backup after unwrap: %q, want the original", got)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 2 {
		t.Errorf("the config's folder holds %v; want only the config and HOME's .local, no backup", entries)
	}
}

// TestWrapNeverLosesAConcurrentEdit: while wrap runs, another program keeps
// rewriting the config (write a temp file, rename it over, as editors and
// clients do). Whatever wrap says, the other program's last version must be
// the file's content, wrapped or not: 150 runs on a 2 KiB file. Unix only:
// Windows has neither flock nor an atomic exchange of two names, and an edit
// made between wrap's last look and its rename is lost there (README).
func TestWrapNeverLosesAConcurrentEdit(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, ".mcp.json")
	pad := strings.Repeat("x", 2000)
	version := func(k int64) []byte {
		return fmt.Appendf(nil, "{\n  \"numStartups\": %d,\n  \"tip\": %q,\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@mcp/fs\"]}}\n}\n", k, pad)
	}
	edit := func(k int64) {
		tmp := fmt.Sprintf("%s.edit%d", file, k)
		os.WriteFile(tmp, version(k), 0o600)
		os.Rename(tmp, file)
	}
	const runs = 150
	lost, wrote := 0, 0
	for run := 0; run < runs; run++ {
		edit(0)
		var last atomic.Int64
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { // the other program: returns when told to stop
			defer close(done)
			for k := int64(1); ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				edit(k)
				last.Store(k)
				time.Sleep(time.Duration(rand.IntN(6000)) * time.Microsecond) // about as long as a wrap takes
			}
		}()
		code, out := runIn(t, home, builtShim(t), "wrap", "--config", file)
		close(stop)
		<-done
		final, _ := os.ReadFile(file)
		if !bytes.Contains(final, fmt.Appendf(nil, "\"numStartups\": %d,", last.Load())) {
			lost++
			if lost == 1 {
				t.Errorf("run %d: wrap exited %d and the file lacks the last edit (%d): it starts %q; wrap said: %s",
					run, code, last.Load(), final[:min(len(final), 30)], out[max(0, len(out)-200):])
			}
		}
		if code == 0 && bytes.Contains(final, []byte(`"--name"`)) {
			wrote++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d runs lost the other program's last edit", lost, runs)
	}
	t.Logf("wrap wrote the file in %d of %d runs, and refused or was overwritten in the others", wrote, runs)
}
