//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// TestNPMLauncher: the npm launcher runs the platform binary with stdio
// inherited: the same bytes as the binary run directly, its exit status, and
// the signal a client sends reaches the binary.
func TestNPMLauncher(t *testing.T) {
	bin := builtShim(t)
	npx := npmInstall(t, bin, false)
	ledger := filepath.Join(t.TempDir(), "npm.jsonl")

	t.Run("version", func(t *testing.T) {
		direct, _, _ := exchange(t, []string{bin, "--version"}, nil)
		got, stderr, st := exchange(t, append(npx, "--version"), nil)
		if st.ExitCode() != 0 || !bytes.Equal(got, direct) {
			t.Errorf("launcher --version: exit %d, stdout %q, stderr %q; want 0 and %q", st.ExitCode(), got, stderr, direct)
		}
	})

	t.Run("bytes", func(t *testing.T) {
		input := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"npm","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"two","method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo \u2028 ` + strings.Repeat("w\u00f6rld ", 50000) + `"}}}
`)
		want, _, _ := exchange(t, []string{bin, "fixture", "healthy"}, input)
		got, stderr, st := exchange(t, append(npx, "--name", "npm", "--ledger", ledger, "--", bin, "fixture", "healthy"), input)
		if st.ExitCode() != 0 || !bytes.Equal(got, want) || bytes.Count(want, []byte("\n")) != 3 {
			t.Errorf("through the launcher: exit %d, %d bytes on stdout, want the fixture's own %d bytes (3 lines)\nstderr: %s", st.ExitCode(), len(got), len(want), stderr)
		}
	})

	t.Run("exit status", func(t *testing.T) {
		args := []string{"--name", "npm", "--ledger", ledger, "--restart", "never", "--", "sh", "-c", "exit 3"}
		_, _, direct := exchange(t, append([]string{bin}, args...), nil)
		_, stderr, st := exchange(t, append(npx, args...), nil)
		if st.ExitCode() != direct.ExitCode() || st.ExitCode() == 0 {
			t.Errorf("launcher of a server that exits 3: exit %d, want the binary's %d\nstderr: %s", st.ExitCode(), direct.ExitCode(), stderr)
		}
	})

	t.Run("signal", func(t *testing.T) {
		// Both ways, SIGTERM once the server answered the handshake; the
		// launcher must end as the binary does.
		end := func(argv []string) (*os.ProcessState, string) {
			cmd := exec.Command(argv[0], argv[1:]...)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr testkit.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"npm","version":"1"}}}`+"\n")
			line := make([]byte, 1)
			if _, err := stdout.Read(line); err != nil {
				t.Fatalf("%s: no answer to initialize: %v\nstderr: %s", argv, err, stderr.String())
			}
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { io.Copy(io.Discard, stdout); cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%s: still running 60s after SIGTERM\nstderr: %s", argv, stderr.String())
			}
			return cmd.ProcessState, stderr.String()
		}
		args := []string{"--name", "npm", "--ledger", ledger, "--restart", "never", "--", bin, "fixture", "healthy"}
		direct, _ := end(append([]string{bin}, args...))
		st, stderr := end(append(npx, args...))
		if st.String() != direct.String() || !strings.Contains(stderr, "signal_received") {
			t.Errorf("launcher after SIGTERM: %v, want the binary's %v and its signal_received event\nstderr: %s", st, direct, stderr)
		}
	})

	t.Run("orphaned", func(t *testing.T) {
		// npx runs the launcher through sh -c; a SIGTERM to npx ends npm and
		// that shell only. The launcher must then stop the binary.
		orphanLedger := filepath.Join(t.TempDir(), "orphan.jsonl")
		argv := append(npx, "--name", "npm", "--ledger", orphanLedger, "--restart", "never", "--", bin, "fixture", "healthy")
		quoted := make([]string, len(argv))
		for i, a := range argv {
			quoted[i] = "'" + a + "'"
		}
		sh := exec.Command("sh", "-c", strings.Join(quoted, " ")+"; :")
		// Files, not exec's pipes: Wait for sh must neither close our ends
		// nor wait for the launcher, which holds them too.
		r, stdin, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		stdout, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdout.Close()
		stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		sh.Stdin, sh.Stdout, sh.Stderr = r, w, stderr
		err = sh.Start()
		r.Close()
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"npm","version":"1"}}}`+"\n")
		if _, err := stdout.Read(make([]byte, 1)); err != nil {
			t.Fatalf("no answer to initialize through sh -c: %v", err)
		}
		sh.Process.Kill()
		sh.Wait()
		// The binary, signalled, exits; the launcher with it; stdout closes.
		done := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, stdout); done <- err }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("the launcher's binary still holds stdout 60s after its parent died")
		}
		if b, _ := os.ReadFile(orphanLedger); !bytes.Contains(b, []byte(`"signal_received"`)) {
			t.Errorf("the ledger has no signal_received after the launcher's parent died:\n%s\nstderr: %s", b, readFile(stderr.Name()))
		}
	})

	t.Run("no platform package", func(t *testing.T) {
		got, stderr, st := exchange(t, append(npmInstall(t, bin, true), "--version"), nil)
		var pkg struct{ Version string }
		json.Unmarshal([]byte(readFile("../../npm/mcpshim/package.json")), &pkg)
		want := npmPlatform(t) + " is not installed, and it holds the mcpshim binary for " + runtime.GOOS
		install := "npm install " + npmPlatform(t) + "@" + pkg.Version
		if st.ExitCode() != 1 || len(got) != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, install) || strings.Contains(stderr, "omit") {
			t.Errorf("launcher without %s: exit %d, stdout %q, stderr %q; want 1, nothing on stdout, the package named and %q", npmPlatform(t), st.ExitCode(), got, stderr, install)
		}
	})
}
