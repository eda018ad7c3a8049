package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// StartGuard launches a guard for a package runner's job. The job alone ends
// the tree when the shim dies (process_windows.go), at once; a runner that
// may be installing must be given its grace first (runner.go), so the guard
// holds a handle on the job too and ends it only after the grace. Without a
// grace no guard is needed and none is started (nil, nil). The returned file
// is the shim's end of the guard's stdin; closing it releases the guard.
func StartGuard(argv []string, p *Process, grace time.Duration) (*os.File, error) {
	if grace <= 0 {
		return nil, nil
	}
	p.sys.mu.Lock()
	job := p.sys.job
	var dup windows.Handle
	var err error
	if job != 0 {
		self := windows.CurrentProcess()
		err = windows.DuplicateHandle(self, job, self, &dup, 0, true, windows.DUPLICATE_SAME_ACCESS)
	}
	p.sys.mu.Unlock()
	if job == 0 {
		return nil, fmt.Errorf("the server's job is already closed")
	}
	if err != nil {
		return nil, fmt.Errorf("share the job with the guard: %w", err)
	}
	defer windows.CloseHandle(dup) // the guard has its own copy once started
	args := append(argv[1:len(argv):len(argv)], strconv.FormatUint(uint64(dup), 10), grace.String())
	cmd := exec.Command(argv[0], args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(dup)},
		// Its own group: a Ctrl-C typed at the shim's console is not for it.
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP,
	}
	if !hasConsole() {
		cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW
	}
	return startGuard(cmd)
}

// RunGuard is the guard process's main: it waits for EOF on stdin (the shim
// closed its end or died), then, unless the shim wrote GuardReady, waits up
// to grace for the job (the handle StartGuard gave it) to have no process
// left, and ends it. Windows has no SIGTERM to send in between.
func RunGuard(stdin io.Reader, job int, grace time.Duration) int {
	if job <= 0 {
		return 2
	}
	h := windows.Handle(job)
	// The console's Ctrl-C and Ctrl-Break are for the shim, which is gone
	// or stopping its server its own way.
	signal.Ignore(os.Interrupt)
	ready := waitRelease(stdin)
	if grace > 0 && !ready && jobEmpty(h, grace) {
		return 0
	}
	_ = windows.TerminateJobObject(h, killExitCode)
	return 0
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                             int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime         int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, Gone uint32
}

// jobEmpty waits up to d for job to have no process left.
func jobEmpty(job windows.Handle, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var info jobAccounting
		err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
		if err != nil || info.ActiveProcesses == 0 {
			return err == nil
		}
	}
	return false
}
