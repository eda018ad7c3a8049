package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// eventWait is how long a test waits for something the shim will do: long,
// because a loaded machine is slow, never a reason to fail.
const eventWait = 60 * time.Second

// waitEvent polls the ledger at path until it holds a record of event, and
// returns the first one. A line still being written is skipped, not failed.
func waitEvent(t testing.TB, path, event string, timeout time.Duration) ledger.Entry {
	t.Helper()
	var got ledger.Entry
	waitFor(t, "ledger event "+event+" in "+path, timeout, func() bool {
		data, _ := os.ReadFile(path)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if e, err := ledger.Decode(line); err == nil && e.Event == event {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
