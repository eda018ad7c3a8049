package probe

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// ownCPU is this process's user and system CPU time.
func ownCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	_ = windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user)
	ticks := func(f windows.Filetime) time.Duration {
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
	}
	return ticks(kernel) + ticks(user)
}

// What the system says for a refused connection, a missing file and a
// command not on PATH.
var (
	refusedText  = windows.WSAECONNREFUSED.Error()
	noSuchFile   = windows.ERROR_FILE_NOT_FOUND.Error()
	notOnPathErr = "executable file not found in %PATH%"
)

// installExe writes an executable called name into dir, a batch file doing
// nothing (found through PATHEXT), and returns its path.
func installExe(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name+".cmd")
	if err := os.WriteFile(p, []byte("@exit /b 0\r\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// linkSelf makes this test binary runnable as dir/name.exe: a copy, as a
// running program's file (or a link to it) cannot be removed on Windows.
func linkSelf(t *testing.T, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".exe"), b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}
