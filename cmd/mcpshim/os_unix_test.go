//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noSuchFile is how the system says a file does not exist.
const noSuchFile = "no such file or directory"

// killedStatus is the shim's exit status when the ladder killed its server.
const killedStatus = 128 + 9

// ladderSteps are the kill_requested signals of a server that ignores
// stdin's EOF and every signal but SIGKILL.
func ladderSteps() string { return "SIGTERM,SIGKILL" }

// deafServer ignores its stdin; deafEnd is what ends it after the client
// left: the ladder's SIGTERM.
var deafServer, deafEnd = []string{"sleep", "1000"}, "SIGTERM"

// systemPath is a minimal PATH: dirs, then the system's own directories.
func systemPath(dirs ...string) string {
	return strings.Join(append(dirs, "/usr/bin", "/bin"), string(os.PathListSeparator))
}

// installScript puts in dir a script called name that runs argv.
func installScript(t *testing.T, dir, name string, argv ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexec "+strings.Join(argv, " ")+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
