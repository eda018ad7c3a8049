//go:build !windows

package testfixtures

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// faultSignals are the signals the fault fixture can send itself.
var faultSignals = map[string]syscall.Signal{"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM}

// killSelf sends the fixture the signal named, and waits for it to land.
func killSelf(name string, errw io.Writer) int {
	sig, ok := faultSignals[name]
	if !ok {
		fmt.Fprintf(errw, "fixture fault: unknown signal %q\n", name)
		return 2
	}
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Minute)
	return 1
}
