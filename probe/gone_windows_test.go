package probe

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
)

// gone reports whether pid is dead within ten seconds: a job's processes end
// asynchronously once it is ended.
func gone(pid int) bool {
	// Generous: a loaded machine may take seconds to schedule the exit.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if !proc.Alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
