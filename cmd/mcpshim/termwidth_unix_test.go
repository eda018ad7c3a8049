//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// inPTY runs the built mcpshim in a pseudo-terminal cols wide, as a person
// at a terminal would, and returns what it printed (CRLF made LF).
func inPTY(t *testing.T, cols uint16, args ...string) string {
	t.Helper()
	bin := builtShim(t)
	if args[0] == "demo" {
		bin = demoBin(t)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"NO_COLOR=1", "TZ=UTC", "PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, testkit.Env()...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: 60})
	if err != nil {
		t.Fatalf("start in a pty: %v", err)
	}
	defer f.Close()
	var out bytes.Buffer
	io.Copy(&out, f) // ends with EIO once the process has exited
	cmd.Wait()
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

func longest(s string) (int, string) {
	n, line := 0, ""
	for _, l := range strings.Split(s, "\n") {
		if c := utf8.RuneCountInString(l); c > n {
			n, line = c, l
		}
	}
	return n, line
}

// TestOutputFitsTheTerminal: on an 80-column terminal the ledger's table,
// stats, why and tail fit in 80 columns, columns giving way and WHY cut
// with "…"; --wide, and a pipe, get every column.
func TestOutputFitsTheTerminal(t *testing.T) {
	dir := writeFleet(t)
	for _, args := range [][]string{{"ledger", dir}, {"ledger", "stats", dir}, {"ledger", "why", dir}, {"ledger", "tail", "-n", "40", dir}} {
		out := inPTY(t, 80, args...)
		if n, line := longest(out); n > 80 || n == 0 {
			t.Errorf("mcpshim %q in 80 columns: a line of %d:\n%s\nall:\n%s", args, n, line, out)
		}
	}
	narrow := inPTY(t, 80, "ledger", dir)
	if strings.Contains(narrow, "NOISE") || !strings.Contains(narrow, "OUTCOME") || !strings.Contains(narrow, "WHY") || !strings.Contains(narrow, "STARTED") {
		t.Errorf("ledger in 80 columns:\n%s\nwant NOISE dropped, STARTED, OUTCOME and WHY kept", narrow)
	}
	// Each run's WHY is whole (under its row, folded, when the row has no
	// room for it) rather than cut to 30 characters.
	_, js, _ := runBuilt(t, t.TempDir(), []string{"TZ=UTC"}, "ledger", "--json", dir)
	var doc struct{ Runs []struct{ Detail string } }
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(narrow), " ")
	for _, r := range doc.Runs {
		if why := strings.Join(strings.Fields(r.Detail), " "); len(why) < 140 && !strings.Contains(flat, why) {
			t.Errorf("ledger in 80 columns lacks the whole WHY %q:\n%s", why, narrow)
		}
	}
	wide := inPTY(t, 80, "ledger", "--wide", dir)
	if n, _ := longest(wide); n <= 80 || !strings.Contains(wide, "NOISE") || !strings.Contains(wide, "CALLS ok/isErr/err") {
		t.Errorf("ledger --wide in 80 columns: longest line %d, want every column:\n%s", n, wide)
	}
	code, piped, _ := runBuilt(t, t.TempDir(), []string{"NO_COLOR=1", "TZ=UTC"}, "ledger", dir)
	if n, _ := longest(piped); code != 0 || n <= 80 || !strings.Contains(piped, "NOISE") {
		t.Errorf("ledger into a pipe: exit %d, longest line %d, want every column", code, n)
	}
	if w := inPTY(t, 200, "ledger", dir); !strings.Contains(w, "NOISE") || !strings.Contains(w, "CALLS ok/isErr/err") {
		t.Errorf("ledger in 200 columns: want every column\n%s", w)
	}
}
