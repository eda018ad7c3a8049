package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What became of a container once its run ended (ContainerRun.Stop).
const (
	ContainerGone    = "gone"    // the engine no longer has it (--rm removed it)
	ContainerStopped = "stopped" // it exists, not running (a run without --rm keeps it)
	ContainerRunning = "running" // still running: the engine would not stop it
	ContainerUnknown = "unknown" // the engine could not be asked
)

// WithCIDFile is command with --cidfile path right after run, so the CLI
// writes the container's id where the shim (and its guard) can read it.
// A command that gives its own --cidfile is returned as it is.
func (r ContainerRun) WithCIDFile(command []string, path string) []string {
	if r.CIDFile != "" {
		return command
	}
	return slices.Concat(command[:r.Run+1], []string{"--cidfile", path}, command[r.Run+1:])
}

// ReadCID is the container id the CLI wrote to path; "" while it has not
// (the image is being pulled, or the container was never created).
func ReadCID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Stop ends container id, asking the same engine the run asked (Engine,
// env): `stop -t grace` (its stop signal, then SIGKILL after grace), or
// `kill` at once when kill is set (the CLI already took the ladder's
// SIGTERM: the engine forwarded it). It returns what the engine says of the
// container then, and the engine's words when it could not be asked.
func (r ContainerRun) Stop(ctx context.Context, env []string, id string, grace time.Duration, kill bool) (state, why string) {
	ctx, cancel := context.WithTimeout(ctx, grace+containerAsk)
	defer cancel()
	args := []string{"stop", "-t", strconv.Itoa(int((grace + time.Second - 1) / time.Second)), id}
	if kill {
		args = []string{"kill", id}
	}
	if out, err := r.engine(ctx, env, args...); err != nil && noSuch(out) {
		return ContainerGone, ""
	}
	return r.State(ctx, env, id)
}

// State is what the engine says of container id: gone, stopped, running,
// or unknown with the engine's words.
func (r ContainerRun) State(ctx context.Context, env []string, id string) (state, why string) {
	out, err := r.engine(ctx, env, "inspect", "--format", "{{.State.Running}}", id)
	switch s := strings.TrimSpace(string(out)); {
	case err == nil && s == "true":
		return ContainerRunning, ""
	case err == nil && s == "false":
		return ContainerStopped, ""
	case noSuch(out):
		return ContainerGone, ""
	case err != nil && s == "":
		return ContainerUnknown, err.Error()
	default:
		return ContainerUnknown, lastLine(s)
	}
}

// containerAsk bounds one question to the engine beyond the stop's grace.
const containerAsk = 10 * time.Second

func (r ContainerRun) engine(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.Engine[0], slices.Concat(r.Engine[1:], args)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w", r.Engine[0], args[0], err)
	}
	return out, nil
}

// noSuch: the engine's answer for a container it does not have (docker's
// "No such container"/"No such object", podman's "no such container").
func noSuch(out []byte) bool {
	out = bytes.ToLower(out)
	return bytes.Contains(out, []byte("no such container")) || bytes.Contains(out, []byte("no such object"))
}

func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}
