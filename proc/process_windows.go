package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no process groups and tells a child nothing when its parent
// dies, and npx.cmd, cmd /c and uvx put processes between the shim and the
// server. The child is created suspended, put in a job object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, and only then resumed: nothing it
// starts can run outside the job, and the job dies with its last handle, the
// shim's (or a runner's guard's: guard_windows.go), however the shim dies.

// sysProcess holds the child's job. Signal and Kill may race Release.
type sysProcess struct {
	mu    sync.Mutex
	job   windows.Handle // 0 once released
	proc  windows.Handle // the child, to ask whether it still runs; 0 once released
	ended bool           // the shim ended the job while the child ran
}

// stillActive is GetExitCodeProcess's code for a running process (STILL_ACTIVE).
const stillActive = 259

// killExitCode is the exit code of the processes of a job the shim ends.
const killExitCode = 1

// hasConsole reports whether the shim is attached to a console, which its
// children then share: only then can it send them CTRL_BREAK_EVENT.
var hasConsole = sync.OnceValue(func() bool {
	_, err := windows.GetConsoleCP()
	return err == nil
})

// sysProcAttr creates the child suspended (started assigns it to its job
// before it runs) in a process group of its own: a Ctrl-C typed at the
// shim's console is the shim's to act on, and CTRL_BREAK_EVENT can be sent
// to the group. Without a console to share, the child gets a hidden one of
// its own rather than a window per server.
func sysProcAttr(bool) *syscall.SysProcAttr {
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP)
	if !hasConsole() {
		flags |= windows.CREATE_NO_WINDOW
	}
	return &syscall.SysProcAttr{CreationFlags: flags}
}

// started puts the suspended child pid in a new job and resumes it.
func (s *sysProcess) started(pid int) error {
	job, err := newJob()
	if err != nil {
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err == nil {
		if err = windows.AssignProcessToJobObject(job, h); err == nil {
			err = resume(pid)
		}
		if err != nil {
			windows.CloseHandle(h)
		}
	}
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("put the server in a job object: %w", err)
	}
	s.job, s.proc = job, h
	return nil
}

// newJob creates a job whose processes die when its last handle closes.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("set the job's limits: %w", err)
	}
	return job, nil
}

// resume resumes the threads of the suspended process pid: its main thread,
// the only one it has. exec closed the handle CreateProcess gave for it.
func resume(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

// classifyOS says in Windows' terms why CreateProcess refused: its errors
// are not errno's, and a hint about chmod or #! lines would mislead.
func classifyOS(err error, dir string, se *SpawnError) {
	switch {
	case se.Class == ClassNotFound:
		se.Hint = `use an absolute path (C:\...\server.exe): clients may launch servers with a minimal Path`
	case errors.Is(err, windows.ERROR_BAD_EXE_FORMAT), errors.Is(err, windows.ERROR_EXE_MACHINE_TYPE_MISMATCH):
		se.Class = ClassNotExecutable
		se.Hint = "the file is not a program Windows can run: run a script through its interpreter (node server.js, python server.py)"
	case errors.Is(err, windows.ERROR_DIRECTORY):
		se.Class = ClassBadCwd
		se.Hint = fmt.Sprintf("the working directory %s does not exist or cannot be entered", dir)
	case se.Class == ClassPermission:
		se.Hint = "Windows refused to run it: check the file's security settings, and whether it is blocked (Unblock-File)"
	}
}

// envKeyEqual compares environment names as Windows does: without case.
func envKeyEqual(a, b string) bool { return strings.EqualFold(a, b) }

// LookPath finds file as cmd.exe would, in the PATH the server will get: a
// name without an extension (npx) is tried with each of PATHEXT's (npx.cmd),
// a name with one (uvx.exe, npx.cmd) as it is. A path (relative to dir, the
// child's working directory) is tried with PATHEXT's too, then as it is.
func LookPath(file string, env []string, dir string) (string, error) {
	if file == "" {
		return file, nil
	}
	exts := pathExts(EnvValue(env, "PATHEXT"))
	if strings.ContainsAny(file, `/\:`) {
		if p, ok := withExt(file, exts, dir); ok {
			return p, nil
		}
		if isFile(file, dir) {
			return file, nil // CreateProcess says what is wrong with it
		}
		// As Linux says it, not exec's "not found in %PATH%" for a path.
		return "", &fs.PathError{Op: "fork/exec", Path: file, Err: windows.ERROR_FILE_NOT_FOUND}
	}
	for _, d := range filepath.SplitList(EnvValue(env, "PATH")) {
		if d == "" {
			continue
		}
		if p, ok := withExt(filepath.Join(d, file), exts, ""); ok {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// withExt is path (relative to dir) as it is when its extension is one of
// exts, else path with the first of exts that names a file.
func withExt(path string, exts []string, dir string) (string, bool) {
	if ext := strings.ToLower(filepath.Ext(path)); ext != "" && slices.Contains(exts, ext) && isFile(path, dir) {
		return path, true
	}
	for _, ext := range exts {
		if isFile(path+ext, dir) {
			return path + ext, true
		}
	}
	return "", false
}

// pathExts is PATHEXT's extensions in lower case, or exec's defaults.
func pathExts(v string) []string {
	var exts []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		exts = append(exts, e)
	}
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// The names the ledger gives the stop ladder's steps after stdin's close:
// the polite one (which needs a console) and the last.
const (
	StopName = "CTRL_BREAK_EVENT"
	KillName = "TerminateJobObject"
)

// Status returns the exit code and, when the shim ended the child's job,
// KillName as the signal: Windows has no signals, and an exit code cannot
// say who ended a process. Valid after Exited is closed.
func (p *Process) Status() (code int, signal string) {
	if p.state == nil {
		return -1, ""
	}
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	if code = p.state.ExitCode(); p.sys.ended && code == killExitCode {
		return code, KillName
	}
	return code, ""
}

// ShellStatus is the child's exit code. Valid after Exited is closed.
func (p *Process) ShellStatus() int {
	if p.state == nil {
		return 1
	}
	return p.state.ExitCode()
}

// Kill ends the child's job: the child and everything it started.
func (p *Process) Kill() { _ = p.sys.terminate() }

// Release closes the shim's handle on the job once the child's run is over:
// what is left of its tree dies with it, unless a runner's guard still holds
// the job (guard_windows.go).
func (p *Process) Release() {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	for _, h := range []*windows.Handle{&p.sys.job, &p.sys.proc} {
		if *h != 0 {
			windows.CloseHandle(*h)
			*h = 0
		}
	}
}

func (s *sysProcess) terminate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job == 0 {
		return nil
	}
	var code uint32
	running := s.proc != 0 && windows.GetExitCodeProcess(s.proc, &code) == nil && code == stillActive
	err := windows.TerminateJobObject(s.job, killExitCode)
	// Not a child that had exited by itself, its code perhaps the same.
	s.ended = s.ended || err == nil && running
	return err
}

// ErrNoConsole is Signal's answer to a stop request when the shim has no
// console to send CTRL_BREAK_EVENT through: the caller goes on to Kill.
var ErrNoConsole = errors.New("no console to send CTRL_BREAK_EVENT through")

// Signal asks the child to stop or ends it. SIGKILL ends the job; SIGINT and
// SIGTERM send CTRL_BREAK_EVENT to the child's process group (a Node server
// sees SIGBREAK, a Go one os.Interrupt), which needs a console the shim
// shares with it (ErrNoConsole). Other signals do not exist on Windows and
// are not sent.
func (p *Process) Signal(sig syscall.Signal) error {
	switch sig {
	case syscall.SIGKILL:
		return p.sys.terminate()
	case syscall.SIGINT, syscall.SIGTERM:
		if !hasConsole() {
			return ErrNoConsole
		}
		return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.Pid))
	}
	return fmt.Errorf("signal %s: %w", SignalName(sig), errors.ErrUnsupported)
}

// Alive reports whether a process with this pid is running.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED) // someone else's, running
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// SignalName is the conventional name of sig (SIGTERM).
func SignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
