package probe

import (
	"time"

	"golang.org/x/sys/windows"
)

// ownCPU is this process's user and system CPU time.
func ownCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	_ = windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user)
	ticks := func(f windows.Filetime) time.Duration {
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
	}
	return ticks(kernel) + ticks(user)
}
