package proc

import "syscall"

// sysProcAttr puts the child in its own process group. Darwin has no
// Pdeathsig; the guard process (see guard.go) kills the group when the shim dies.
func sysProcAttr(bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
