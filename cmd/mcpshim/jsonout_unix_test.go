//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestJSONToFullDisk: a --json document that cannot be written (stdout is
// /dev/full, a full disk) is said on stderr and fails the command; it was
// lost in silence with exit 0.
func TestJSONToFullDisk(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"a": fixtureEntry(t, "healthy")})
	env := []string{"HOME=" + dir, "XDG_STATE_HOME=" + dir, "XDG_CACHE_HOME=" + dir, "PATH=/usr/bin:/bin"}
	for _, args := range [][]string{
		{"auth", "status", "--json"},
		{"wrap", "--check", "--json", "--config", cfg},
		{"probe", "--json", "--config", cfg, "--ledger", "off"},
		{"lock", "--json", "--config", cfg, "--out", dir + "/l.json", "--ledger", "off"},
		{"ledger", "--json", dir},
	} {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		cmd := exec.Command(builtShim(t), args...)
		cmd.Dir, cmd.Env, cmd.Stdout = dir, env, full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		full.Close()
		if err == nil || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("mcpshim %s > /dev/full: got %v, stderr %q; want a failure that says the disk is full", strings.Join(args, " "), err, stderr.String())
		}
	}
}
