//go:build !windows

package probe

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// gone reports whether pid is dead: no such process, or a zombie an orphan's
// new parent has yet to reap. Killing is immediate; reaping by init may lag.
func gone(pid int) bool {
	// Generous: a loaded machine may take seconds to schedule the exit.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return true
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if _, after, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(after, "Z") {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
