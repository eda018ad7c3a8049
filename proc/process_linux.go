package proc

import "syscall"

// sysProcAttr puts the child in its own process group and has the kernel kill
// it when the shim dies, however it dies. A package runner is not killed so:
// a SIGKILL mid-install breaks its cache (runner.go); the guard stops it.
func sysProcAttr(runner bool) *syscall.SysProcAttr {
	if runner {
		return &syscall.SysProcAttr{Setpgid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
