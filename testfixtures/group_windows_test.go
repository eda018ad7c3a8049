package testfixtures

import "os/exec"

// ownGroup has nothing to do on Windows: no fixture these tests start there
// spawns a process of its own (TestGrandchildHoldsStdout is Unix-only).
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
