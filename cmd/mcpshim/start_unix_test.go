//go:build !windows

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// TestLedgerUnopenableAfterStart: the server is running by the time the shim
// finds its ledger cannot be opened. The client still gets its answer, the
// stderr says why nothing is recorded, and a shim killed then leaves no
// process behind (its guard ends the server and its grandchild).
func TestLedgerUnopenableAfterStart(t *testing.T) {
	bin := builtShim(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	marker := fmt.Sprintf("MCPSHIM_LEAKTEST=unopenable-%d", os.Getpid())
	cmd := exec.Command(bin, "--ledger", filepath.Join(file, "sub", "l.jsonl"), "--", bin, "fixture", "grandchild")
	cmd.Env = append(os.Environ(), marker)
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":%s}`+"\n", initParams)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize answered %q, %v; want the server's answer\nstderr:\n%s", line, err, stderr.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !strings.Contains(stderr.String(), "cannot be opened") {
		t.Errorf("no stderr line about the ledger:\n%s", stderr.String())
	}
	if left := leftOver(marker); len(left) > 0 {
		t.Fatalf("%d processes left over %v after the shim was killed: %v", len(left), eventWait, left)
	}
}
