//go:build !windows

package interop

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// teeArg, as the test binary's first argument, makes it a recording tee
// instead of a test run: `interop.test -interop.tee PREFIX -- COMMAND ARG...`.
const teeArg = "-interop.tee"

// bins are the programs the suite runs, built or found once in TestMain.
var bins struct {
	shim, gosdkServer, mcpgoServer string
	self                           string // this test binary, for the tee
	node, python                   string // "" when not installed
	modules                        string // interop/node_modules, "" when not installed
}

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == teeArg {
		os.Exit(runTee(os.Args[2:]))
	}
	flag.Parse()
	os.Exit(setUp(m))
}

func setUp(m *testing.M) int {
	defer testkit.Cleanup()
	for _, b := range []struct {
		dst *string
		pkg string
	}{
		{&bins.shim, "github.com/mcpshim-dev/mcpshim/cmd/mcpshim"},
		{&bins.gosdkServer, "./testdata/gosdk-server"},
		{&bins.mcpgoServer, "./testdata/mcpgo-server"},
	} {
		var err error
		if *b.dst, err = testkit.Build(b.pkg); err != nil {
			fmt.Fprintf(os.Stderr, "interop: %v\n", err)
			return 1
		}
	}
	var err error
	if bins.self, err = os.Executable(); err != nil {
		fmt.Fprintf(os.Stderr, "interop: %v\n", err)
		return 1
	}
	bins.node, _ = exec.LookPath("node")
	bins.python, _ = exec.LookPath("python3")
	if bins.node != "" {
		if err := installModules(); err != nil {
			// need() fails (or, under -short, skips) the tests that use them.
			fmt.Fprintf(os.Stderr, "interop: %v\n", err)
		}
	}
	if abs, err := filepath.Abs("node_modules"); err == nil && modulesCurrent(abs) == nil {
		bins.modules = abs
	}
	return testkit.Main(m) // fails the run on a race report no test took
}

// installModules runs `npm ci` in interop/ when node_modules lacks a package
// pinned in package.json, or has another version of it: `go test ./...` on a
// fresh checkout installs what it needs once, and runs offline afterwards.
// A lock file keeps two test processes from installing at once.
func installModules() error {
	if modulesCurrent("node_modules") == nil {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("interop/node_modules is missing or stale and npm is not on PATH: install node and npm, then run npm ci --prefix interop")
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "mcpshim-interop-npm.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if modulesCurrent("node_modules") == nil {
		return nil // another test process installed them meanwhile
	}
	fmt.Fprintln(os.Stderr, "interop: installing the pinned npm packages (npm ci --prefix interop), once")
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in interop/: %w (check that the npm registry is reachable, then run npm ci --prefix interop)", err)
	}
	return modulesCurrent("node_modules")
}

// modulesCurrent says which pinned dev dependency of package.json is missing
// from dir or installed at another version, or nil when none is.
func modulesCurrent(dir string) error {
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	b, err := os.ReadFile("package.json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("interop/package.json: %w", err)
	}
	for name, want := range pkg.DevDependencies {
		var got struct{ Version string }
		b, err := os.ReadFile(filepath.Join(dir, name, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &got)
		}
		if err != nil {
			return fmt.Errorf("interop/node_modules lacks %s: %w", name, err)
		}
		if got.Version != want {
			return fmt.Errorf("interop/node_modules has %s %s, want %s", name, got.Version, want)
		}
	}
	return nil
}

// need skips t under -short when a tool of the suite is missing, and fails it
// otherwise: CI always installs them (.ci/install-interop.sh).
func need(t *testing.T, what string) {
	t.Helper()
	var missing string
	switch what {
	case "node":
		if bins.node == "" {
			missing = "node is not on PATH"
		} else if bins.modules == "" {
			missing = "interop/node_modules is missing: run npm ci --prefix interop"
		}
	case "python3":
		if bins.python == "" {
			missing = "python3 is not on PATH"
		}
	case "":
	default:
		t.Fatalf("need(%q): unknown tool", what)
	}
	if missing == "" {
		return
	}
	if testing.Short() {
		t.Skip(missing)
	}
	t.Fatal(missing)
}

// teeArgv is argv run behind a recording tee that writes PREFIX.in and PREFIX.out.
func teeArgv(prefix string, argv []string) []string {
	return append([]string{bins.self, teeArg, prefix, "--"}, argv...)
}

// runTee is the recording tee: it runs COMMAND, relays stdin to it and its
// stdout back unchanged, and appends every byte it reads, before passing it
// on, to PREFIX.in (from stdin) and PREFIX.out (from the command's stdout).
// Recording what was read rather than what was written keeps the record whole
// when the next hop has gone. It passes SIGTERM, SIGINT and SIGHUP on to the
// command and exits with the command's status.
func runTee(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: interop.test -interop.tee PREFIX -- COMMAND [ARG...]")
		return 2
	}
	// A reader that left is not a reason to stop recording what the command says.
	signal.Ignore(syscall.SIGPIPE)
	prefix, argv := args[0], args[2:]
	in, err := os.Create(prefix + ".in")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tee: %v\n", err)
		return 2
	}
	out, err := os.Create(prefix + ".out")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tee: %v\n", err)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tee: %v\n", err)
		return 2
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tee: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "tee: start %s: %v\n", argv[0], err)
		return 127
	}
	// The client's signals are meant for the server: pass them on.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	go func() {
		relay(stdin, os.Stdin, in)
		stdin.Close()
	}()
	relay(os.Stdout, stdout, out)
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tee: %v\n", err)
		return 1
	}
	return 0
}

// relay copies src to dst, recording every byte read in rec; after a write
// to dst fails it goes on reading and recording until src ends.
func relay(dst io.Writer, src io.Reader, rec io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			rec.Write(buf[:n])
			if dst != nil {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					dst = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}
