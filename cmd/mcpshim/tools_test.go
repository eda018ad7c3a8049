package main

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of the first of names on PATH. When none is
// there, the test is skipped saying what to install, and under CI=true it
// fails instead: in CI, "ok" must never hide a check that did not run.
func needTool(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missingTool(t, names[0], pkg)
	return ""
}

// missingTool skips, or under CI=true fails, a test whose tool is missing.
func missingTool(t testing.TB, tool, pkg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not on PATH and CI=true: a missing tool fails in CI (apt-get install -y %s; .ci/run installs it)", tool, pkg)
	}
	t.Skipf("%s is not on PATH: install it (apt-get install -y %s) to run this check", tool, pkg)
}
