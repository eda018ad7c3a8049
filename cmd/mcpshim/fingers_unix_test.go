//go:build !windows

package main

import (
	"strings"
	"testing"
)

// TestBareCommandNearASubcommand: a first word near a subcommand's name is
// a typo only when no such command exists: deno (near demo) on PATH runs as
// the server. Before, `mcpshim deno ...` said "did you mean demo?".
func TestBareCommandNearASubcommand(t *testing.T) {
	dir := t.TempDir()
	installScript(t, dir, "deno", builtShim(t))
	env := append(fingersEnv(dir), "PATH="+systemPath(dir))
	_, direct, _ := runBuiltStdin(t, dir, env, clientSession, "fixture", "healthy")
	code, stdout, stderr := runBuiltStdin(t, dir, env, clientSession, "deno", "fixture", "healthy")
	if code != 0 || stdout != direct {
		t.Errorf("mcpshim deno fixture healthy (deno on PATH): exit %d, stdout\n%s\nwant 0 and the server's own\n%s\nstderr: %s", code, stdout, direct, stderr)
	}
	code, _, stderr = runBuiltStdin(t, dir, env, clientSession, "demos")
	if code != exitUsage || !strings.Contains(stderr, "did you mean demo?") {
		t.Errorf("mcpshim demos (no such command): exit %d, %q; want 64 and did you mean demo?", code, stderr)
	}
}
