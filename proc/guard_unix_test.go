//go:build !windows

package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuardRunnerLadder: for a package runner that may be installing, the
// guard sends nothing while the group finishes by itself within the grace,
// SIGTERM after it; a group that answered the handshake is killed at once.
func TestGuardRunnerLadder(t *testing.T) {
	tests := []struct {
		name  string
		said  string // what the shim wrote to the guard before dying
		grace time.Duration
		ticks int    // how many 50ms ticks the stand-in lives, 0 for ever
		terms string // the SIGTERMs the group saw
		how   string // how it ended
	}{
		{"installing: no signal while it finishes by itself", "", time.Minute, 20, "", "exit status 0"},
		{"installing past the grace: SIGTERM", "", time.Second, 0, "term\n", "exit status 0"},
		{"handshake answered: killed at once", string(GuardReady), time.Minute, 0, "", "signal: killed"},
		{"no grace: killed at once", "", 0, 0, "", "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			log, up := filepath.Join(dir, "terms"), filepath.Join(dir, "up")
			// A runner stand-in: notes each SIGTERM and exits after the first.
			child := exec.Command("sh", "-c", `trap 'echo term >> `+log+`; exit 0' TERM; : > `+up+`; i=0
				while [ `+strconv.Itoa(tt.ticks)+` -eq 0 ] || [ $i -lt `+strconv.Itoa(tt.ticks)+` ]; do sleep 0.05; i=$((i+1)); done`)
			child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer child.Process.Kill()
			ended := make(chan error, 1)
			go func() { ended <- child.Wait() }() // returns when it exits: reaped at once, as an orphan is by init
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(up); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the stand-in never set its trap")
				}
			}
			r, w, _ := os.Pipe()
			w.Write([]byte(tt.said))
			w.Close() // the shim died
			if got := RunGuard(r, child.Process.Pid, tt.grace); got != 0 {
				t.Fatalf("RunGuard = %d, want 0", got)
			}
			err := <-ended
			how := "exit status 0"
			if err != nil {
				how = err.Error()
			}
			terms, _ := os.ReadFile(log)
			if string(terms) != tt.terms || !strings.HasPrefix(how, tt.how) {
				t.Errorf("said %q, grace %v: the group saw SIGTERMs %q and ended %q; want %q and %q", tt.said, tt.grace, terms, how, tt.terms, tt.how)
			}
		})
	}
}
