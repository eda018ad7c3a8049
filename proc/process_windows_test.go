package proc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary is its own child: PROC_TEST_HELPER=tree starts a
// grandchild (PROC_TEST_HELPER=sleep), says its pid on stdout, and waits for
// stdin's EOF; with PROC_TEST_EXIT it exits at once instead, leaving the
// grandchild in the job.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "guard" { // StartGuard's argv: guard HANDLE GRACE
		job, _ := strconv.Atoi(os.Args[2])
		grace, _ := time.ParseDuration(os.Args[3])
		os.Exit(RunGuard(os.Stdin, job, grace))
	}
	switch os.Getenv("PROC_TEST_HELPER") {
	case "stdin":
		io.Copy(io.Discard, os.Stdin)
		fmt.Println("eof") // it was not ended before
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "tree":
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), "PROC_TEST_HELPER=sleep")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Printf("grandchild %d\n", gc.Process.Pid)
		if os.Getenv("PROC_TEST_EXIT") == "" {
			io.Copy(io.Discard, os.Stdin)
		}
		os.Exit(0)
	case "args":
		fmt.Printf("%q\n", os.Args[1:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startTree starts the helper tree and returns it with its grandchild's pid.
func startTree(t *testing.T, env ...string) (*Process, int) {
	t.Helper()
	p, err := Start(Spec{Path: os.Args[0], Env: append(append(os.Environ(), "PROC_TEST_HELPER=tree"), env...)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(p.Release)
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "grandchild ")))
	if err != nil || perr != nil {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	if !Alive(pid) {
		t.Fatalf("grandchild %d is not running", pid)
	}
	return p, pid
}

// gone waits for pid to end; the job ends its processes asynchronously.
func gone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s %d still runs 30s later", what, pid)
		}
	}
}

// TestJobKillsTree: Kill ends the child and the grandchild it started, which
// joined the job by itself: no process group to signal on Windows.
func TestJobKillsTree(t *testing.T) {
	p, gc := startTree(t)
	p.Kill()
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the child still runs 30s after Kill")
	}
	gone(t, "grandchild", gc)
	if code, sig := p.Status(); code != killExitCode || sig != KillName {
		t.Errorf("status after Kill: got %d %q, want %d %q", code, sig, killExitCode, KillName)
	}
}

// TestReleaseEndsLeftovers: a child that exits leaves its grandchild in the
// job; closing the shim's handle (the end of the run, or the shim's death)
// ends it.
func TestReleaseEndsLeftovers(t *testing.T) {
	p, gc := startTree(t, "PROC_TEST_EXIT=1")
	<-p.Exited()
	if !Alive(gc) {
		t.Fatal("the grandchild died with its parent: the test proves nothing")
	}
	p.Release()
	gone(t, "grandchild", gc)
}

// TestStopByClosingStdin: the ladder's first step works: the child reads
// its stdin's EOF and exits 0.
func TestStopByClosingStdin(t *testing.T) {
	p, _ := startTree(t)
	p.Stdin.Close()
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the child still runs 30s after its stdin closed")
	}
	if code, sig := p.Status(); code != 0 || sig != "" {
		t.Errorf("status: got %d %q, want 0 and no signal", code, sig)
	}
}

// TestSpawnAsClientsWriteIt: npx, npx.cmd, cmd /c npx and a path with spaces
// all start the program a client meant, with its arguments whole.
func TestSpawnAsClientsWriteIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Program Files", "nodejs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.ReadFile(os.Args[0])
	if err := os.WriteFile(filepath.Join(dir, "server.exe"), self, 0o755); err != nil {
		t.Fatal(err)
	}
	// npx.cmd as npm installs it: a batch file that runs a program with its arguments.
	if err := os.WriteFile(filepath.Join(dir, "npx.cmd"), []byte("@echo off\r\n\"%~dp0\\server.exe\" %*\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PROC_TEST_HELPER=args", "Path="+dir+";"+os.Getenv("SystemRoot")+`\system32`)
	want := `["-y" "@scope/pkg@1.2.3"]`
	tests := []struct {
		path string
		args []string
	}{
		{"npx", []string{"-y", "@scope/pkg@1.2.3"}},
		{"npx.cmd", []string{"-y", "@scope/pkg@1.2.3"}},
		{"NPX", []string{"-y", "@scope/pkg@1.2.3"}},
		{"cmd", []string{"/c", "npx", "-y", "@scope/pkg@1.2.3"}},
		{filepath.Join(dir, "server.exe"), []string{"-y", "@scope/pkg@1.2.3"}},
		{filepath.Join(dir, "server"), []string{"-y", "@scope/pkg@1.2.3"}},
		{"server", []string{"-y", "@scope/pkg@1.2.3"}},
	}
	for _, tt := range tests {
		p, err := Start(Spec{Path: tt.path, Args: tt.args, Env: env})
		if err != nil {
			t.Errorf("Start(%q, %q): %v", tt.path, tt.args, err)
			continue
		}
		out, _ := io.ReadAll(p.Stdout)
		<-p.Exited()
		p.Release()
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("Start(%q, %q): the server got %s, want %s", tt.path, tt.args, got, want)
		}
	}
}

// TestSpawnMissing: a command that is on no PATH, with or without PATHEXT's
// help, is not_found with exit status 127, as on Linux.
func TestSpawnMissing(t *testing.T) {
	for _, path := range []string{"no-such-server", "no-such-server.cmd", `C:\no\such\server.exe`} {
		_, err := Start(Spec{Path: path, Env: []string{"Path=" + t.TempDir()}})
		se, ok := err.(*SpawnError)
		if !ok || se.Class != ClassNotFound || se.ExitStatus() != 127 {
			t.Errorf("Start(%q): got %#v, want class %s", path, err, ClassNotFound)
		}
	}
}

// TestSpawnFailuresClassified: what CreateProcess says for a script given
// as the command, a missing working directory and a non-program is the same
// class as on Linux, with a hint that fits Windows.
func TestSpawnFailuresClassified(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.js")
	os.WriteFile(script, []byte("console.log(1)\n"), 0o644)
	exe := filepath.Join(dir, "broken.exe")
	os.WriteFile(exe, []byte("not a program"), 0o755)
	tests := []struct {
		spec  Spec
		class string
	}{
		{Spec{Path: script}, ClassNotExecutable},
		{Spec{Path: exe}, ClassNotExecutable},
		{Spec{Path: os.Args[0], Dir: filepath.Join(dir, "missing")}, ClassBadCwd},
	}
	for _, tt := range tests {
		_, err := Start(tt.spec)
		se, ok := err.(*SpawnError)
		if !ok || se.Class != tt.class {
			t.Errorf("Start(%+v): got %#v (%v), want class %s", tt.spec, err, err, tt.class)
			continue
		}
		if strings.Contains(se.Hint, "chmod") || strings.Contains(se.Hint, "#!") {
			t.Errorf("Start(%+v): hint %q is for Unix", tt.spec, se.Hint)
		}
	}
}

// TestGuardRunnerGrace: a package runner's guard holds the job when the
// shim is gone: a runner that may be installing finishes by itself (exit 0,
// not the job's end); one that answered its handshake (GuardReady) is ended
// at once. Without a grace no guard is started: the job alone does it.
func TestGuardRunnerGrace(t *testing.T) {
	start := func() *Process {
		p, err := Start(Spec{Path: os.Args[0], Env: append(os.Environ(), "PROC_TEST_HELPER=stdin")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Kill)
		return p
	}
	exited := func(p *Process) (int, string) {
		select {
		case <-p.Exited():
		case <-time.After(30 * time.Second):
			t.Fatal("the runner still runs 30s later")
		}
		return p.Status()
	}
	argv := []string{os.Args[0], "guard"}

	if g, err := StartGuard(argv, start(), 0); g != nil || err != nil {
		t.Errorf("StartGuard without a grace: got %v, %v; want no guard", g, err)
	}

	installing := start()
	g, err := StartGuard(argv, installing, time.Minute)
	if err != nil || g == nil {
		t.Fatalf("StartGuard: %v", err)
	}
	installing.Release() // the shim died: its handle on the job is gone
	g.Close()
	installing.Stdin.Close() // the install is over: the runner exits by itself
	said, _ := io.ReadAll(installing.Stdout)
	if code, sig := exited(installing); code != 0 || sig != "" || string(said) != "eof\n" {
		t.Errorf("a runner within its grace ended with %d %q, having said %q; want its own exit 0 after eof", code, sig, said)
	}

	ready := start()
	if g, err = StartGuard(argv, ready, time.Minute); err != nil || g == nil {
		t.Fatalf("StartGuard: %v", err)
	}
	ready.Release()
	g.Write([]byte{GuardReady})
	g.Close()
	if code, _ := exited(ready); code != killExitCode {
		t.Errorf("a runner past its handshake ended with %d, want the job ended (%d)", code, killExitCode)
	}
}
