//go:build !windows

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestProbeAndDemoFit80Columns, in an 80-column pty: probe's live progress
// line stays within 79 columns (a full line leaves the cursor past the edge
// and the next redraw lands a row below, leaving a stale one), its result
// lines fold at spaces instead of the terminal breaking a word, and the
// demo's lines fit.
func TestProbeAndDemoFit80Columns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet of fixture servers and the demo")
	}
	dir := t.TempDir()
	const path = "/etc/some/really/long/path/to/config.yaml"
	servers := map[string]any{"early": map[string]any{"command": "sh", "args": []string{"-c",
		"echo 'fatal: the configuration file " + path + " could not be read because permission was denied' >&2; exit 1"}}}
	for i := range 12 {
		servers[fmt.Sprintf("a-fairly-long-server-name-%02d", i)] = map[string]any{"command": fixtureBin(t), "args": []string{"fixture", "slow-init", "--delay", "700ms"}}
	}
	cfg := writeMCPConfig(t, dir, servers)
	out := inPTY(t, 80, "probe", "--fresh", "--config", cfg)
	for _, line := range strings.Split(out, "\n") {
		for i, part := range strings.Split(line, "\r") { // the progress line redraws with \r
			part = strings.ReplaceAll(part, "\x1b[K", "")
			if n := len([]rune(part)); n > 80 || (i > 0 && n > 79) {
				t.Errorf("probe in 80 columns: a line of %d: %q", n, part)
			}
		}
	}
	if !strings.Contains(out, "probing ") || !strings.Contains(out, path) || !strings.Contains(out, "13 servers in") {
		t.Errorf("probe in 80 columns: want the progress line, the path whole on one line, and the summary:\n%s", out)
	}
	demo := inPTY(t, 80, "demo", "--dir", t.TempDir())
	if n, line := longest(demo); n > 80 || !strings.Contains(demo, "every outcome as expected") {
		t.Errorf("demo in 80 columns: a line of %d: %q\n%s", n, line, demo)
	}
}
