//go:build !windows

package testfixtures

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, for killGroup.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd and anything it spawned.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
