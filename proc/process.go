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
	classifyOS(err, dir, se)
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
	sys    sysProcess // what the platform holds besides the pid (Windows: the job)
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

// Start launches spec in its own process group, tied to the shim's life:
// Pdeathsig on Linux, started from a locked OS thread that stays alive until
// the child is reaped, because Pdeathsig fires when the thread that started
// the child exits, not the process; on Windows a job object the child is in
// before it runs (process_windows.go).
func Start(spec Spec) (*Process, error) {
	env := spec.Env
	if env == nil {
		env = os.Environ() // a nil Env inherits the shim's, as in exec
	}
	path, err := LookPath(spec.Path, env, spec.Dir)
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
		if err := p.sys.started(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
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

// EnvValue is the value of key in env (the last one wins, as in exec). On
// Windows names are not case sensitive: PATH is often spelled Path there.
func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && envKeyEqual(k, key) {
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

// State describes how the child ended ("exit status 1", "signal: killed").
// Valid after Exited is closed.
func (p *Process) State() string {
	if p.state == nil {
		return "unknown"
	}
	return p.state.String()
}
