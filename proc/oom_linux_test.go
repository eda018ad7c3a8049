package proc

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOOMCount reads this test's own memory cgroup, whichever version the
// machine has, and the oom_kill line of both files' formats.
func TestOOMCount(t *testing.T) {
	o := WatchOOM(os.Getpid())
	if o.Err != nil {
		t.Logf("unreadable here: %v", o.Err) // a machine without a memory cgroup says why
	} else if n, err := o.Kills(); err != nil || n < 0 {
		t.Errorf("Kills() = %d, %v; want a count from %s", n, err, o.File)
	}
	dir := t.TempDir()
	for _, c := range []struct{ body string }{
		{"low 0\nhigh 0\nmax 0\noom 2\noom_kill 3\noom_group_kill 0\n"}, // v2 memory.events
		{"oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"},               // v1 memory.oom_control
	} {
		f := filepath.Join(dir, "events")
		if err := os.WriteFile(f, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if n, err := readOOMKills(f); n != 3 || err != nil {
			t.Errorf("readOOMKills(%q) = %d, %v; want 3", c.body, n, err)
		}
	}
}
