//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestLedgerColours runs the built binary on a terminal: colours there, none
// with NO_COLOR.
func TestLedgerColours(t *testing.T) {
	bin := builtShim(t)
	dir := writeFleet(t)
	for _, noColor := range []bool{false, true} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		cmd := exec.Command(bin, "ledger", dir)
		cmd.Env = append(os.Environ(), "TERM=xterm")
		if noColor {
			cmd.Env = append(cmd.Env, "NO_COLOR=1")
		}
		cmd.Stdout, cmd.Stderr = tty, tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var out bytes.Buffer
		r := bufio.NewReader(ptmx)
		for {
			line, err := r.ReadString('\n')
			out.WriteString(line)
			if err != nil || strings.Contains(line, " runs (") {
				break
			}
		}
		cmd.Wait()
		ptmx.Close()
		if has := strings.Contains(out.String(), "\x1b["); has == noColor {
			t.Errorf("NO_COLOR=%v on a terminal: got colour escapes %v, want %v:\n%q", noColor, has, !noColor, out.String())
		}
	}
}
