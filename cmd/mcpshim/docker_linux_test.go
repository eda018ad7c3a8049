//go:build linux

package main

import (
	"archive/tar"
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

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// TestDocker runs servers the way many ship, `docker run -i --rm IMAGE`,
// through the built shim against a real Docker engine of the test's own
// (Debian's docker.io: dockerd on a private socket, no iptables, no bridge,
// its data under a temp dir), with an image imported offline that holds
// the shim's own fixtures, built static. After each way a run can end, no
// container of the test is left.
func TestDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Docker engine")
	}
	begin := time.Now()
	image := startDockerd(t)
	t.Logf("engine started and image imported in %v", time.Since(begin))
	run := func(t *testing.T, flags []string, fixture ...string) (*session, string) {
		label := "mcpshim.test=" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
		argv := append([]string{"docker", "run", "-i", "--rm", "--network", "none", "--label", label, image}, fixture...)
		return start(t, true, append([]string{"--kill-grace", "1s"}, flags...), argv...), label
	}
	// exitedGone checks that each run's exited record names its container,
	// gone, and that the engine has none of the test's.
	exitedGone := func(t *testing.T, s *session, label string, runs int) {
		t.Helper()
		var ids []string
		for _, e := range s.entries() {
			if e.Event != "exited" {
				continue
			}
			if e.Str("container") != "gone" || len(e.Str("container_id")) != 64 {
				t.Errorf("exited container=%q container_id=%q, want gone and the container's id", e.Str("container"), e.Str("container_id"))
			}
			ids = append(ids, e.Str("container_id"))
		}
		if len(ids) != runs {
			t.Errorf("got %d exited records, want %d; events %v", len(ids), runs, events(s.entries()))
		}
		noContainerLeft(t, label)
	}

	t.Run("client EOF", func(t *testing.T) {
		s, label := run(t, nil, "healthy")
		dockerCall(s, "1", "initialize", initParams)
		if got := s.finish(); got != 0 {
			t.Errorf("exit status %d, want 0", got)
		}
		exitedGone(t, s, label, 1)
	})
	t.Run("SIGTERM to the shim", func(t *testing.T) {
		s, label := run(t, nil, "healthy")
		dockerCall(s, "1", "initialize", initParams)
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.readToEOF()
		waitOrKill(t, s.cmd, eventWait)
		exitedGone(t, s, label, 1)
	})
	t.Run("SIGKILL to the shim", func(t *testing.T) {
		// The guard outlives the shim: it stops the container.
		s, label := run(t, nil, "stubborn")
		dockerCall(s, "1", "initialize", initParams)
		s.cmd.Process.Kill()
		waitOrKill(t, s.cmd, eventWait)
		noContainerLeft(t, label)
	})
	t.Run("crash and restart", func(t *testing.T) {
		// Each container counts its own calls: the second crashes the first, the
		// restarted one answers the third.
		s, label := run(t, []string{"--backoff", "50ms"}, "healthy", "--crash-on-call", "2")
		dockerCall(s, "1", "initialize", initParams)
		s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i, want := range []string{`"one"`, `"code":-31000`, `"three"`} {
			text := []string{"one", "two", "three"}[i]
			if r := dockerCall(s, fmt.Sprint(i+2), "tools/call", `{"name":"echo","arguments":{"text":"`+text+`"}}`); !strings.Contains(r, want) {
				t.Fatalf("call %d = %s, want %s", i+1, r, want)
			}
		}
		s.finish()
		exitedGone(t, s, label, 2)
	})
	t.Run("no such image", func(t *testing.T) {
		label := "mcpshim.test=no-such-image"
		s := start(t, true, nil, "docker", "run", "-i", "--rm", "--pull", "never", "--label", label, "mcpshim-test-absent:latest")
		r := dockerCall(s, "1", "initialize", initParams)
		for _, want := range []string{"exited with code 125 before answering: docker: Error response from daemon: No such image: mcpshim-test-absent:latest", "pull it first"} {
			if !strings.Contains(r, want) {
				t.Errorf("answer %s, want it to say %q", r, want)
			}
		}
		s.finish()
		if e := find(s.entries(), "exited"); e == nil || e.Str("container") != "none" {
			t.Errorf("exited %+v, want container=none", e)
		}
	})
	t.Run("no -i", func(t *testing.T) {
		label := "mcpshim.test=no-i"
		s := start(t, true, nil, "docker", "run", "--rm", "--network", "none", "--label", label, image, "healthy")
		r := dockerCall(s, "1", "initialize", initParams)
		if want := "`docker run` without -i: the container got no stdin"; !strings.Contains(r, want) {
			t.Errorf("answer %s, want it to say %q", r, want)
		}
		s.finish()
		noContainerLeft(t, label)
	})
	t.Run("server ignores EOF and SIGTERM", func(t *testing.T) {
		s, label := run(t, nil, "stubborn")
		dockerCall(s, "1", "initialize", initParams)
		s.finish()
		exitedGone(t, s, label, 1)
	})
}

// TestDockerDaemonDown: with no engine at DOCKER_HOST, the client's error
// says so, from the CLI's own line, with what to do, not "See 'docker run
// --help'." (the line after it).
func TestDockerDaemonDown(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		missingTool(t, "docker", "docker.io")
	}
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-engine.sock"))
	s := start(t, true, nil, "docker", "run", "-i", "--rm", "mcp/time")
	r := dockerCall(s, "1", "initialize", initParams)
	for _, want := range []string{"exited with code 125 before answering: docker: Cannot connect to the Docker daemon at unix://", "Is the docker daemon running?", "the container engine is not running: start it"} {
		if !strings.Contains(r, want) {
			t.Errorf("answer %s, want it to say %q", r, want)
		}
	}
	s.finish()
	if e := find(s.entries(), "exited"); e == nil || !strings.HasPrefix(e.Str("stderr_cause"), "docker: Cannot connect") {
		t.Errorf("exited %+v, want stderr_cause the CLI's line", e)
	}
}

// dockerCall is session.call with the wait a container's start may need on
// a busy machine.
func dockerCall(s *session, id, method, params string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	if err := s.client.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`); err != nil {
		s.t.Fatalf("%s %s: %v", method, id, err)
	}
	for {
		line, err := s.client.ReadLine(ctx)
		if m := mcp.Peek(line); m.IsResponse() && !m.Partial && string(m.RawID) == id {
			return string(line)
		}
		if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.t.Fatalf("%s %s: %v; the shim's stderr:\n%s", method, id, err, s.stderr)
		}
	}
}

// noContainerLeft waits until the engine has no container labelled label,
// running or not.
func noContainerLeft(t *testing.T, label string) {
	t.Helper()
	var left string
	deadline := time.Now().Add(eventWait)
	for {
		out, err := exec.Command("docker", "ps", "-a", "--filter", "label="+label, "--format", "{{.ID}} {{.Status}}").CombinedOutput()
		if left = strings.TrimSpace(string(out)); err == nil && left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("containers of the test left %v after the shim ended: %s (err %v)", eventWait, left, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cannotDocker skips a test that needs an engine the machine cannot run, or
// fails it under CI=true, saying why.
func cannotDocker(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("no Docker engine and CI=true (.ci/run installs docker.io): "+format, args...)
	}
	t.Skipf("no Docker engine (apt-get install docker.io, as root): "+format, args...)
}

// startDockerd starts a Docker engine for t alone, points DOCKER_HOST at it
// and imports the fixture image; it returns the image's name. The engine
// stops, and its directory goes, when t ends.
func startDockerd(t *testing.T) string {
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		cannotDocker(t, "dockerd is not on PATH")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		cannotDocker(t, "docker is not on PATH")
	}
	if os.Geteuid() != 0 {
		cannotDocker(t, "dockerd needs root, and the test runs as uid %d", os.Geteuid())
	}
	// Not t.TempDir: a unix socket's path must stay short.
	dir, err := os.MkdirTemp("", "mcpshim-dockerd-")
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "docker.sock")
	cmd := exec.Command(dockerd, "--host", "unix://"+sock, "--iptables=false", "--ip6tables=false", "--bridge=none",
		"--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "docker.pid"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cannotDocker(t, "%v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(eventWait):
			cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		os.RemoveAll(dir)
	})
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	deadline := time.Now().Add(eventWait)
	for exec.Command("docker", "version").Run() != nil {
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile.Name())
			cannotDocker(t, "dockerd exited: %s", lastLines(string(log), 10))
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("dockerd did not answer within %v: %s", eventWait, lastLines(string(log), 10))
		}
		time.Sleep(100 * time.Millisecond)
	}
	const image = "mcpshim-test-fixture:latest"
	importFixtureImage(t, dir, image)
	return image
}

// importFixtureImage builds the shim static (the image has no libc) and
// imports a tarball holding it alone as image, whose entrypoint is
// `mcpshim fixture`: `docker run -i IMAGE healthy` serves the fixture.
func importFixtureImage(t *testing.T, dir, image string) {
	bin := filepath.Join(dir, "mcpshim")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var rootfs bytes.Buffer
	tw := tar.NewWriter(&rootfs)
	tw.WriteHeader(&tar.Header{Name: "mcpshim", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
	tw.Write(data)
	tw.Close()
	imp := exec.Command("docker", "import", "-c", `ENTRYPOINT ["/mcpshim", "fixture"]`, "-", image)
	imp.Stdin = &rootfs
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
