//go:build !windows

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// sysProcess is empty on Unix: the process group is the pid.
type sysProcess struct{}

func (*sysProcess) started(int) error { return nil }

// classifyOS has nothing to add on Unix: Classify's cases are errno's.
func classifyOS(error, string, *SpawnError) {}

// envKeyEqual compares environment names as exec does: exactly.
func envKeyEqual(a, b string) bool { return a == b }

// LookPath finds file in the PATH the server will get. A name with a slash is
// left to the start itself, which reports what is wrong with it.
func LookPath(file string, env []string, _ string) (string, error) {
	if file == "" || filepath.Base(file) != file {
		return file, nil
	}
	for _, dir := range filepath.SplitList(EnvValue(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// The names the ledger gives the stop ladder's steps after stdin's close:
// the polite one and the last.
const (
	StopName = "SIGTERM"
	KillName = "SIGKILL"
)

// Status returns the exit code (-1 when killed by a signal) and the signal
// name. Valid after Exited is closed.
func (p *Process) Status() (code int, signal string) {
	if p.state == nil {
		return -1, ""
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, SignalName(ws.Signal())
	}
	return p.state.ExitCode(), ""
}

// ShellStatus is the status a shell would report: the code, or 128+signal.
func (p *Process) ShellStatus() int {
	if p.state == nil {
		return 1
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.state.ExitCode()
}

// Kill ends the child and its whole process group at once, and the child
// itself should it have left the group.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	_ = syscall.Kill(p.Pid, syscall.SIGKILL)
}

// Release is called once the child's run is over. On Unix the guard kills
// what is left of the group when its pipe closes; there is nothing to free.
func (p *Process) Release() {}

// Signal sends sig to the child's whole process group: servers started through
// npx or uvx leave grandchildren that keep running otherwise.
func (p *Process) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Alive reports whether a process with this pid exists (kill -0).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// SignalName is the conventional name of sig (SIGTERM).
func SignalName(sig syscall.Signal) string {
	if name := signalNames[sig]; name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
}
