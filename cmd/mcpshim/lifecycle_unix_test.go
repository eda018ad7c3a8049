//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// TestSlowClientGetsEverything: a server that writes a lot and exits at once
// to a client that reads slowly: the shim keeps relaying while bytes still
// move, instead of closing the pipe under them.
func TestSlowClientGetsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("a slow reader takes seconds")
	}
	bin := builtShim(t)
	const size = 1 << 20
	cmd := exec.Command(bin, "--ledger", "off", "--quiet", "--restart", "never", "--",
		"sh", "-c", fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a; echo; exit 0`, size))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	got := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := stdout.Read(buf)
		got += n
		if err != nil {
			break
		}
		time.Sleep(120 * time.Millisecond) // 64 KiB at a time: about 2 s for the whole
	}
	cmd.Wait()
	if got != size+1 {
		t.Fatalf("client read %d bytes, want %d", got, size+1)
	}
}

// TestSignalForwarded: SIGTERM to the shim reaches the server's group, is
// recorded, and ends the session without a restart.
func TestSignalForwarded(t *testing.T) {
	s := start(t, true, nil, "fixture", "healthy")
	s.call("1", "initialize", initParams)
	s.cmd.Process.Signal(syscall.SIGTERM)
	// The shim ends by itself: read to EOF before closing stdin, so the
	// client leaving cannot be what stopped it.
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	for {
		if _, err := s.client.ReadLine(ctx); err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
			break
		}
	}
	got := s.finish()
	if got != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d (the server died of the forwarded SIGTERM)", got, 128+int(syscall.SIGTERM))
	}
	es := s.entries()
	sr := find(es, "signal_received")
	if sr == nil || sr.Str("signal") != "SIGTERM" || !sr.Bool("forwarded") {
		t.Errorf("signal_received = %+v, want SIGTERM forwarded", sr)
	}
	if find(es, "restart_scheduled") != nil {
		t.Errorf("restarted after the shim was told to stop")
	}
}

// TestNoProcessLeftBehind spawns and ends the shim 200 times — SIGKILL to the
// shim, SIGTERM, client EOF, crash loops, servers with grandchildren — and
// counts the processes left over: zero.
func TestNoProcessLeftBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("200 real shims")
	}
	bin := builtShim(t)
	marker := fmt.Sprintf("MCPSHIM_LEAKTEST=%d", os.Getpid())
	ways := []string{"sigkill", "sigterm", "eof", "crashloop"}
	for i := range 200 {
		way := ways[i%len(ways)]
		fixture := []string{"fixture", "grandchild"}
		if way == "crashloop" {
			fixture = []string{"fixture", "healthy", "--crash-after-handshake"}
		}
		args := append([]string{"--ledger", "off", "--quiet", "--backoff", "1ms", "--kill-grace", "100ms", "--", fixtureBin(t)}, fixture...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), marker)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":%s}`+"\n", initParams)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		bufio.NewReader(stdout).ReadString('\n') // the server is up (or the shim answered for it)
		switch way {
		case "sigkill":
			cmd.Process.Kill()
		case "sigterm":
			cmd.Process.Signal(syscall.SIGTERM)
		case "eof":
			stdin.Close()
		}
		go io.Copy(io.Discard, stdout)
		waitOrKill(t, cmd, eventWait)
		stdin.Close()
	}
	// Orphans of a SIGKILLed shim are ended by its guard; give them a moment.
	if left := leftOver(marker); len(left) > 0 {
		t.Fatalf("%d processes left over after %v: %v", len(left), eventWait, left)
	}
}

// leftOver is the processes whose environment holds marker still alive
// eventWait from now, or none as soon as they are gone.
func leftOver(marker string) []string {
	deadline := time.Now().Add(eventWait)
	left := processesWith(marker)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		left = processesWith(marker)
	}
	return left
}

// processesWith lists live processes whose environment holds marker.
func processesWith(marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(marker+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		out = append(out, d.Name()+":"+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// TestProbeInterruptedLeavesNothing: Ctrl-C during a probe stops the probed
// servers, which live in process groups of their own, and exits 130.
func TestProbeInterruptedLeavesNothing(t *testing.T) {
	bin := builtShim(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers":{"silent":{"command":"`+bin+`","args":["fixture","silent"]}}}`), 0o600)
	marker := fmt.Sprintf("MCPSHIM_PROBETEST=%d", os.Getpid())
	cmd := exec.Command(bin, "probe", "--config", config, "--timeout", "30s", "--ledger", "off")
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to run beside the probe", eventWait, func() bool { return len(processesWith(marker)) >= 2 })
	cmd.Process.Signal(syscall.SIGINT)
	waitOrKill(t, cmd, eventWait)
	if got := cmd.ProcessState.ExitCode(); got != 130 {
		t.Errorf("exit status %d, want 130", got)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// TestTerminalHint drives the shim from a terminal, as a person trying it by
// hand would: it says it is meant for an MCP client, then carries on.
func TestTerminalHint(t *testing.T) {
	bin := builtShim(t)
	cmd, ptmx, stderr := onTerminal(t, bin, "fixture", "healthy")
	fmt.Fprintf(ptmx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":%s}`+"\n", initParams)
	r := bufio.NewReader(ptmx)
	deadline := time.Now().Add(eventWait)
	for time.Now().Before(deadline) {
		line, err := r.ReadString('\n')
		if strings.Contains(line, `"serverInfo"`) {
			break
		}
		if err != nil {
			t.Fatalf("no answer through the terminal: %v", err)
		}
	}
	ptmx.Write([]byte{4}) // ^D: EOF at the terminal
	waitOrKill(t, cmd, eventWait)
	if !strings.Contains(stderr.String(), "meant to be launched by an MCP client") {
		t.Errorf("no terminal hint on stderr:\n%s", stderr.String())
	}
}

// TestTerminalMissingCommandExitsAtOnce: a person who typed a wrong command
// at a terminal is told so and gets the prompt back; the wait for a client's
// first request (10 s) is for clients, which write it as they start.
func TestTerminalMissingCommandExitsAtOnce(t *testing.T) {
	cmd, ptmx, stderr := onTerminal(t, "no-such-mcp-server-x")
	go io.Copy(io.Discard, ptmx) // the terminal's screen; returns when the pty closes
	// Less than the 10 s a client is waited for: nothing is typed.
	waitOrKill(t, cmd, 8*time.Second)
	if code := cmd.ProcessState.ExitCode(); code != 127 {
		t.Errorf("got exit status %d, want 127\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "no-such-mcp-server-x") {
		t.Errorf("stderr does not name the command:\n%s", stderr.String())
	}
}

// onTerminal starts the shim (--ledger off) in front of argv with its stdin
// and stdout on a new terminal, as a person who typed it; the test reads and
// writes the terminal's other end. Skipped where there is no pty.
func onTerminal(t *testing.T, argv ...string) (*exec.Cmd, *os.File, *testkit.Buffer) {
	t.Helper()
	cmd := exec.Command(builtShim(t), append([]string{"--ledger", "off", "--"}, argv...)...)
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	cmd.Stdin, cmd.Stdout = tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	return cmd, ptmx, stderr
}
