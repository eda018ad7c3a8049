//go:build !windows

package ledger_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestLedgerFullDisk writes to /dev/full: the session carries on, one clear
// line says so, and nothing panics.
func TestLedgerFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	var events bytes.Buffer
	l, _ := ledger.Open(ledger.Options{Path: "/dev/full", Events: &events})
	for range 3 {
		l.Write(&ledger.Record{Run: "r", Phase: phases.Launch, Event: phases.Spawned})
	}
	if l.Lost() != 3 {
		t.Errorf("lost = %d, want 3", l.Lost())
	}
	if n := strings.Count(events.String(), "write failed"); n != 1 {
		t.Errorf("%d 'write failed' lines, want exactly 1:\n%s", n, events.String())
	}
}
