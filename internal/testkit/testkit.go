// Package testkit is what the tests of several packages share: the programs
// they run as real processes, built once, and a buffer a process may write
// while the test reads it. Only tests import it.
package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var builds struct {
	mu   sync.Mutex
	dir  string
	done map[string]*build
}

type build struct {
	once sync.Once
	n    int // its directory's name
	path string
	err  error
}

// shimPkg is the mcpshim command.
const shimPkg = "github.com/mcpshim-dev/mcpshim/cmd/mcpshim"

// Build builds pkg (an import path, or a directory relative to the test's
// package) with go build's flags, once per test binary for one pkg and
// flags, and returns the program's path. The mcpshim command without flags
// is MCPSHIM_TEST_BIN when that names one: built beforehand where there is
// no go tool (.ci/windows.sh runs the tests under wine).
func Build(pkg string, flags ...string) (string, error) {
	if bin := os.Getenv("MCPSHIM_TEST_BIN"); bin != "" && pkg == shimPkg && len(flags) == 0 {
		return bin, nil
	}
	key := pkg + " " + strings.Join(flags, " ")
	builds.mu.Lock()
	if builds.done == nil {
		builds.done = map[string]*build{}
	}
	b := builds.done[key]
	if b == nil {
		b = &build{n: len(builds.done)}
		builds.done[key] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() { b.path, b.err = goBuild(pkg, flags, b.n) })
	return b.path, b.err
}

func goBuild(pkg string, flags []string, n int) (string, error) {
	builds.mu.Lock()
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "mcpshim-test-")
		if err != nil {
			builds.mu.Unlock()
			return "", err
		}
		builds.dir = dir
	}
	// A directory per build: two packages may share a base name.
	dir := filepath.Join(builds.dir, fmt.Sprint(n))
	builds.mu.Unlock()
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	if filepath.Base(pkg) == "." {
		bin = filepath.Join(dir, "main")
	}
	args := append(append([]string{"build"}, flags...), "-o", bin, pkg)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// MustBuild is Build for a test: a failure fails t.
func MustBuild(t testing.TB, pkg string, flags ...string) string {
	t.Helper()
	bin, err := Build(pkg, flags...)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Shim is the mcpshim binary, built once.
func Shim(t testing.TB, flags ...string) string {
	t.Helper()
	return MustBuild(t, shimPkg, flags...)
}

// Main runs m's tests and then removes what Build made: a TestMain is
// os.Exit(testkit.Main(m)).
func Main(m *testing.M) int {
	defer Cleanup()
	return m.Run()
}

// Cleanup removes what Build made; a TestMain calls it after m.Run.
func Cleanup() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
}

// Buffer is a bytes.Buffer a process may write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
