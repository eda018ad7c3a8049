package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// noSuchFile is how the system says a file does not exist.
var noSuchFile = windows.ERROR_FILE_NOT_FOUND.Error()

// killedStatus is the shim's exit status when the ladder ended its server's
// job (proc's killExitCode).
const killedStatus = 1

// ladderSteps are the kill_requested signals of a server that ignores
// stdin's EOF and every console event: CTRL_BREAK_EVENT is tried only when
// the shim shares a console with it (the test's own, inherited).
func ladderSteps() string {
	if _, err := windows.GetConsoleCP(); err == nil {
		return "CTRL_BREAK_EVENT,TerminateJobObject"
	}
	return "TerminateJobObject"
}

// deafServer ignores its stdin; deafEnd is what ends it after the client
// left: the end of its job, the shim having no console to send
// CTRL_BREAK_EVENT through (wine's case; a console would end it first).
var deafServer, deafEnd = []string{"fixture", "sleep"}, "TerminateJobObject"

// systemPath is a minimal Path: dirs, then the system's own directory.
func systemPath(dirs ...string) string {
	return strings.Join(append(dirs, filepath.Join(os.Getenv("SystemRoot"), "system32")), string(os.PathListSeparator))
}

// installScript puts in dir a batch file called name.cmd that runs argv,
// as npm installs a package's command on Windows.
func installScript(t *testing.T, dir, name string, argv ...string) {
	t.Helper()
	line := `@"` + argv[0] + `" ` + strings.Join(argv[1:], " ") + " %*\r\n"
	if err := os.WriteFile(filepath.Join(dir, name+".cmd"), []byte(line), 0o755); err != nil {
		t.Fatal(err)
	}
}
