//go:build !windows

package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// npxPackage is a small real package from the npm registry with 28
// dependencies: enough for an install to be caught halfway.
const npxPackage = "cowsay@1.6.0"

// TestNpxInstallSurvivesClientLeaving: a client that gives up on a cold
// `npx -y` install while npm is installing — by closing the shim's stdin, or
// by killing the shim — costs one failed start, never a broken npx cache:
// the next `npx -y` of the package runs. No process is left once npm is done.
// Before the package-runner ladder, the SIGKILL (the ladder's, or
// Pdeathsig's when the shim was killed) left a half-extracted tree that npx
// took as installed: `npm error enoent Could not read package.json`.
func TestNpxInstallSurvivesClientLeaving(t *testing.T) {
	need(t, "node")
	if testing.Short() {
		t.Skip("installs a package from the npm registry")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("npx is not on PATH: %v", err)
	}
	for _, leave := range []string{"stdin", "kill"} {
		t.Run(leave, func(t *testing.T) {
			cache := t.TempDir()
			env := append(os.Environ(), "npm_config_cache="+cache, "npm_config_update_notifier=false",
				"npm_config_fund=false", "npm_config_audit=false")
			// A file, not a buffer: the shim writes it directly, and the test
			// may read it while a killed shim's children still write.
			stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			cmd := exec.Command(bins.shim, "--name", "cow", "--ledger", filepath.Join(cache, "ledger.jsonl"),
				"--kill-grace", "100ms", "--", npx, "-y", npxPackage, "hi")
			cmd.Env, cmd.Stderr = env, stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			defer cmd.Wait()
			if !waitExtracting(cache, 5*time.Minute) {
				t.Skipf("npx finished or never started extracting before it could be caught halfway:\n%s", readFile(stderr.Name()))
			}
			// Freeze the install where it is, so that whatever the shim
			// sends lands mid-install, however fast the machine.
			ledger := filepath.Join(cache, "ledger.jsonl")
			pgid := ledgerPID(t, ledger)
			syscall.Kill(-pgid, syscall.SIGSTOP)
			if leave == "stdin" {
				stdin.Close() // the client's timeout, the polite way: the shim's ladder runs
				waitLedger(t, ledger, `"event":"client_disconnected"`)
			} else {
				// Thawed first: a stopped group orphaned by its parent's death
				// gets SIGHUP from the kernel (POSIX), which killed npm here
				// half the time in CI — a signal no client's SIGKILL causes.
				// The shim dies microseconds into the resumed install.
				syscall.Kill(-pgid, syscall.SIGCONT)
				cmd.Process.Kill() // the client's SIGKILL: the guard takes over
			}
			// A chance for a signal to land on the frozen install, as the old
			// ladder's SIGTERM and SIGKILL did 100ms and 200ms after the client
			// left, and Pdeathsig's at once; the fixed ladder sends none.
			time.Sleep(time.Second)
			syscall.Kill(-pgid, syscall.SIGCONT)
			if leave == "stdin" {
				cmd.Wait()
			}
			marker := "npm_config_cache=" + cache
			deadline := time.Now().Add(5 * time.Minute)
			for len(processesWithEnv(marker)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("still running 5m after the client left: %v", processesWithEnv(marker))
				}
				time.Sleep(100 * time.Millisecond)
			}
			again := exec.Command(npx, "-y", npxPackage, "second-start")
			again.Env = env
			out, err := again.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "second-start") {
				t.Fatalf("the next npx -y %s: %v\n%s\nwant it to run: the first start's install must not break the cache\nshim stderr:\n%s\nnpm's logs:\n%s",
					npxPackage, err, out, readFile(stderr.Name()), npmLogs(cache))
			}
		})
	}
}

// waitExtracting waits until npm is in the middle of installing the package
// into the npx cache: the whole tree is extracted and its bin linked, but npx
// has not yet written the install's package.json. A SIGKILL there breaks
// the cache every time (3 of 3 tries), and so does a SIGTERM once reify's
// handler is gone (1 of 2): the next start fails with `Could not read
// package.json` or `Invalid package.json`.
func waitExtracting(cache string, timeout time.Duration) bool {
	name := strings.SplitN(npxPackage, "@", 2)[0]
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		dirs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*"))
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, "node_modules", ".bin", name)); err != nil {
				continue
			}
			_, err := os.Stat(filepath.Join(d, "package.json"))
			return os.IsNotExist(err) // there already: too late to catch it halfway
		}
	}
	return false
}

// ledgerPID is the pid (and process group) of the ledger's first spawned child.
func ledgerPID(t *testing.T, path string) int {
	t.Helper()
	line := waitLedger(t, path, `"event":"spawned"`)
	var e struct{ PID int }
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.PID <= 1 {
		t.Fatalf("spawned record %s: %v", line, err)
	}
	return e.PID
}

// waitLedger waits for a ledger line holding s and returns it.
func waitLedger(t *testing.T, path, s string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, s) {
				return line
			}
		}
	}
	t.Fatalf("no ledger line with %s in %s after a minute", s, path)
	return ""
}

// processesWithEnv lists the live processes whose environment holds kv.
func processesWithEnv(kv string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), []byte(kv+"\x00")) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // a zombie waiting for its reaper
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		out = append(out, d.Name()+" "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

// readFile is the file's text, or what went wrong reading it.
func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// npmLogs is the end of each npm debug log in the cache: how the first
// start's npm ended.
func npmLogs(cache string) string {
	logs, _ := filepath.Glob(filepath.Join(cache, "_logs", "*.log"))
	var b strings.Builder
	for _, l := range logs {
		lines := strings.Split(readFile(l), "\n")
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(l), strings.Join(lines[max(0, len(lines)-25):], "\n"))
	}
	return b.String()
}
