//go:build !windows

package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// TestColourRules: the shim's event lines and the ledger's tables follow one
// rule on a terminal: colour unless NO_COLOR is set to something or TERM is
// dumb (an empty NO_COLOR asks for nothing, as no-color.org says).
func TestColourRules(t *testing.T) {
	bin := builtShim(t)
	dir := writeFleet(t)
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{[]string{"TERM=xterm"}, true},
		{[]string{"TERM=xterm", "NO_COLOR=1"}, false},
		{[]string{"TERM=xterm", "NO_COLOR="}, true},
		{[]string{"TERM=dumb"}, false},
	} {
		for _, args := range [][]string{
			{"--ledger", "off", "--", bin, "fixture", "healthy"},
			{"ledger", dir},
		} {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, testkit.Env()...), tc.env...)
			cmd.Stdin = strings.NewReader("") // the client leaves at once
			cmd.Stdout, cmd.Stderr = tty, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			var out bytes.Buffer
			io.Copy(&out, ptmx) // until the command exits and the pty reports EIO
			cmd.Wait()
			ptmx.Close()
			if has := strings.Contains(out.String(), "\x1b["); has != tc.want {
				t.Errorf("mcpshim %s with %v on a terminal: got colour %v, want %v:\n%q", strings.Join(args[:2], " "), tc.env, has, tc.want, out.String())
			}
		}
	}
}
