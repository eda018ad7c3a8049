package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// SpawnError classes, recorded in spawn_failed.
const (
	ClassNotFound      = "not_found"
	ClassPermission    = "permission"
	ClassNotExecutable = "not_executable"
	// ClassBadInterpreter is a file that exists but whose #! interpreter (or
	// ELF loader) does not: execve says ENOENT for it, as for a missing file.
	ClassBadInterpreter = "bad_interpreter"
	ClassBadCwd         = "bad_cwd"
	ClassOther          = "other"
)

// SpawnError is a child that never started.
type SpawnError struct {
	Class string
	Hint  string
	Err   error
}

func (e *SpawnError) Error() string { return e.Err.Error() }
func (e *SpawnError) Unwrap() error { return e.Err }

// ExitStatus is the shell's status for a spawn failure: 127 when the command
// cannot be found, 126 when it cannot be executed (a missing #! interpreter
// included: bash says "bad interpreter" and 126).
func (e *SpawnError) ExitStatus() int {
	if e.Class == ClassNotFound {
		return 127
	}
	return 126
}

// Classify says why err kept a child from starting in dir.
func Classify(err error, dir string) *SpawnError {
	se := &SpawnError{Class: ClassOther, Err: err}
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && pe.Op == "fork/exec" && errors.Is(err, fs.ErrNotExist) && isFile(pe.Path, dir):
		se.Class = ClassBadInterpreter
		se.Hint = "the file exists but its interpreter does not (bad interpreter): install it or fix the #! line"
		if interp := shebang(pe.Path, dir); interp != "" {
			se.Hint = fmt.Sprintf("bad interpreter: the #! line names %s, which does not exist; install it or fix the line", interp)
		}
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist) && !(errors.As(err, &pe) && pe.Op == "chdir"):
		se.Class = ClassNotFound
		se.Hint = "use an absolute path: clients launch servers with a minimal PATH and / as working directory"
	case errors.As(err, &pe) && pe.Op == "chdir":
		se.Class = ClassBadCwd
		se.Hint = fmt.Sprintf("the working directory %s does not exist or cannot be entered", dir)
	case errors.Is(err, syscall.EACCES), errors.Is(err, fs.ErrPermission):
		se.Class = ClassPermission
		se.Hint = "make the file executable (chmod +x) or run it through its interpreter"
	case errors.Is(err, syscall.ENOEXEC):
		se.Class = ClassNotExecutable
		se.Hint = "the file is not a program this system can run: add a #! line or run it through its interpreter"
	}
	return se
}

// isFile reports whether path (relative to dir, where the child starts) is a
// regular file.
func isFile(path, dir string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// shebang is the interpreter a script's #! line names, or "".
func shebang(path, dir string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	line, ok := strings.CutPrefix(string(head[:n]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	if fields := strings.Fields(line); len(fields) > 0 {
		return fields[0]
	}
	return ""
}

// Process is one started child with its pipes. Stdin, Stdout and Stderr are
// the shim's ends. Stdin is closed when the child has been reaped: nothing
// written after can reach it, and a write blocked on a pipe that a
// grandchild holds and never reads fails instead of hanging its writer.
type Process struct {
	Pid     int
	Stdin   *os.File
	Stdout  *os.File
	Stderr  *os.File
	Started time.Time // when the child was started

	cmd    *exec.Cmd
	exited chan struct{}
	state  *os.ProcessState
	err    error
}

// Spec says what to run.
type Spec struct {
	Path string   // looked up in Env's PATH (the server's, not the shim's) when it has no slash
	Args []string // without the command
	Env  []string
	Dir  string
}

// Start launches spec in its own process group, tied to the shim's life
// (Pdeathsig on Linux), from a locked OS thread that stays alive until the
// child is reaped, because Pdeathsig fires when the thread that started the
// child exits, not the process.
func Start(spec Spec) (*Process, error) {
	pathVar := EnvValue(spec.Env, "PATH")
	if spec.Env == nil {
		pathVar = os.Getenv("PATH") // a nil Env inherits the shim's, as in exec
	}
	path, err := lookPath(spec.Path, pathVar)
	if err != nil {
		return nil, Classify(err, spec.Dir)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, Classify(err, spec.Dir)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, Classify(err, spec.Dir)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, Classify(err, spec.Dir)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{spec.Path}, spec.Args...),
		Env:         spec.Env,
		Dir:         spec.Dir,
		Stdin:       stdinR,
		Stdout:      stdoutW,
		Stderr:      stderrW,
		SysProcAttr: sysProcAttr(PackageRunner(spec.Path, spec.Args)),
	}
	p := &Process{Stdin: stdinW, Stdout: stdoutR, Stderr: stderrR, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	// The child's waiter: returns when the child has been reaped (or could
	// not start). Its thread must outlive the child: see Start's comment.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		p.state = cmd.ProcessState
		stdinW.Close()
		close(p.exited)
	}()
	err = <-started
	// The child has its copies; ours would keep the pipes open forever.
	closeAll(stdinR, stdoutW, stderrW)
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return nil, Classify(err, spec.Dir)
	}
	p.Pid = cmd.Process.Pid
	p.Started = time.Now()
	return p, nil
}

// lookPath finds file in the PATH the server will get. A name with a slash is
// left to the start itself, which reports what is wrong with it.
func lookPath(file, path string) (string, error) {
	if file == "" || filepath.Base(file) != file {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
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

// EnvValue is the value of key in env (the last one wins, as in exec).
func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Exited is closed when the child has been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

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

// State describes how the child ended ("exit status 1", "signal: killed").
// Valid after Exited is closed.
func (p *Process) State() string {
	if p.state == nil {
		return "unknown"
	}
	return p.state.String()
}

// Kill ends the child and its whole process group at once, and the child
// itself should it have left the group.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	_ = syscall.Kill(p.Pid, syscall.SIGKILL)
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

// Signal sends sig to the child's whole process group: servers started through
// npx or uvx leave grandchildren that keep running otherwise.
func (p *Process) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
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
