package probe

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
)

// gone reports whether pid is dead within two seconds: a job's processes end
// asynchronously once it is ended.
func gone(pid int) bool {
	for range 40 {
		if !proc.Alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
