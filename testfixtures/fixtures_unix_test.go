//go:build !windows

package testfixtures

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Signals and process groups: Unix only.

func TestStubborn(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "stubborn")
	p.handshake("legacy")
	p.closeStdin()
	p.waitStderr("stdin closed")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if err := p.cmd.Process.Signal(sig); err != nil {
			t.Fatalf("signal %v: %v", sig, err)
		}
	}
	p.stillRunning(300 * time.Millisecond)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(); code != -1 {
		t.Errorf("exit after SIGKILL: got %d, want -1 (signalled)", code)
	}
}

func TestGrandchildHoldsStdout(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "grandchild")
	p.handshake("legacy")
	p.waitStderr("\n")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(p.stderrText(), "grandchild pid=")))
	if err != nil {
		t.Fatalf("stderr: got %q, want grandchild pid=N", p.stderrText())
	}
	p.closeStdin()
	if code := p.exit(); code != 0 {
		t.Errorf("fixture exit after EOF: got %d, want 0", code)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("grandchild %d: got %v, want it alive", pid, err)
	}
	if _, err := p.client.ReadLine(deadline(t, 200*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stdout after the fixture exited: got %v, want no EOF while the grandchild holds it", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.ReadLine(deadline(t, 5*time.Second)); !errors.Is(err, io.EOF) {
		t.Errorf("stdout after the grandchild died: got %v, want io.EOF", err)
	}
}
