// Package testkit is what the tests of several packages share: the programs
// they run as real processes, built once, and a buffer a process may write
// while the test reads it. Only tests import it.
//
// Under go test -race the mcpshim command is built with -race too, and every
// process the tests start inherits a GORACE that halts it at its first data
// race (exit status 66) and writes the report to a file: the test that
// started the shim fails with it (Shim), and so does the package's run
// (Main) for a shim started some other way. The shim's concurrency is its
// supervisor, relay and recorder under real processes: that is where the
// detector must look.
package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	return buildOf(pkg, flags, raceEnabled && pkg == shimPkg)
}

// buildOf is Build, with -race added when race is set.
func buildOf(pkg string, flags []string, race bool) (string, error) {
	if bin := os.Getenv("MCPSHIM_TEST_BIN"); bin != "" && pkg == shimPkg && len(flags) == 0 {
		return bin, nil
	}
	builds.mu.Lock()
	if race {
		if err := raceSetUp(); err != nil {
			builds.mu.Unlock()
			return "", err
		}
		if !slices.Contains(flags, "-race") {
			flags = append([]string{"-race"}, flags...)
		}
	}
	key := pkg + " " + strings.Join(flags, " ")
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

// buildDir makes the directory the builds go in; builds.mu is held.
func buildDir() error {
	if builds.dir != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "mcpshim-test-")
	builds.dir = dir
	return err
}

func goBuild(pkg string, flags []string, n int) (string, error) {
	builds.mu.Lock()
	if err := buildDir(); err != nil {
		builds.mu.Unlock()
		return "", err
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

// Shim is the mcpshim binary, built once (with -race under -race: t then
// fails with any race report a process writes until it ends).
func Shim(t testing.TB, flags ...string) string {
	t.Helper()
	bin := MustBuild(t, shimPkg, flags...)
	if raceEnabled {
		watchRaces(t)
	}
	return bin
}

// Fixture is the mcpshim command built without -race, for its fixture
// subcommand: the servers the shim runs in tests are not what is raced, and
// a race-built server starting slowly on a busy machine failed the tests'
// short probe timeouts.
func Fixture(t testing.TB) string {
	t.Helper()
	bin, err := buildOf(shimPkg, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Main runs m's tests and then removes what Build made: a TestMain is
// os.Exit(testkit.Main(m)). A race report no test took fails the run.
func Main(m *testing.M) int {
	defer Cleanup()
	code := m.Run()
	if reports := takeRaces(); len(reports) > 0 {
		fmt.Fprintf(os.Stderr, "testkit: %d race report(s) from the processes the tests started:\n%s\n", len(reports), strings.Join(reports, "\n"))
		return 1
	}
	return code
}

// Cleanup removes what Build made; a TestMain calls it after m.Run.
func Cleanup() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	races.mu.Lock()
	defer races.mu.Unlock()
	if races.dir != "" {
		os.RemoveAll(races.dir)
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

// races are the race-built processes' reports: GORACE's log_path puts each
// in a file of its own (PREFIX.PID) under dir.
var races struct {
	mu      sync.Mutex
	dir     string
	taken   map[string]bool
	watched map[testing.TB]bool
}

// goraceOptions are what every process the tests start inherits (a test that sets
// a whole environment of its own appends Env()): halt at the first race,
// exit 66, the report in a file, no second's sleep at exit.
const goraceOptions = "halt_on_error=1 exitcode=66 atexit_sleep_ms=0"

// raceSetUp sets GORACE in this process's environment, once; builds.mu is
// held.
func raceSetUp() error {
	races.mu.Lock()
	defer races.mu.Unlock()
	if races.dir != "" {
		return nil
	}
	// A directory of its own that any user may write in: some tests run the
	// shim as nobody.
	dir, err := os.MkdirTemp("", "mcpshim-races-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		return err
	}
	races.dir = dir
	return os.Setenv("GORACE", goraceOptions+" log_path="+filepath.Join(dir, "race"))
}

// Env is what a test that builds a process's environment from nothing
// appends to it: GORACE under -race, nothing otherwise.
func Env() []string {
	if v, ok := os.LookupEnv("GORACE"); ok && raceEnabled {
		return []string{"GORACE=" + v}
	}
	return nil
}

// watchRaces fails t, when it ends, with the race reports written while it
// ran (tests run in parallel: one may take another's, and either way the
// run fails with the report).
func watchRaces(t testing.TB) {
	races.mu.Lock()
	defer races.mu.Unlock()
	if races.watched == nil {
		races.watched = map[testing.TB]bool{}
	}
	if races.watched[t] {
		return
	}
	races.watched[t] = true
	t.Cleanup(func() {
		races.mu.Lock()
		delete(races.watched, t)
		races.mu.Unlock()
		for _, r := range takeRaces() {
			t.Errorf("a race-built process reported a data race:\n%s", r)
		}
	})
}

// takeRaces returns the reports not taken before.
func takeRaces() []string {
	races.mu.Lock()
	defer races.mu.Unlock()
	if races.dir == "" {
		return nil
	}
	entries, _ := os.ReadDir(races.dir)
	var reports []string
	for _, e := range entries {
		if races.taken[e.Name()] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(races.dir, e.Name()))
		if err != nil || len(b) == 0 {
			continue // being written: the next look takes it
		}
		if races.taken == nil {
			races.taken = map[string]bool{}
		}
		races.taken[e.Name()] = true
		reports = append(reports, e.Name()+":\n"+string(b))
	}
	return reports
}
