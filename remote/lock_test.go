package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLockWithURL: a lock naming a tool the remote server lacks is checked
// with --url as with a command: warn mode records tools_missing and forwards
// the list; enforce mode answers the tools/list with an error naming the tool
// and exits 78 (EX_CONFIG).
func TestLockWithURL(t *testing.T) {
	var calls atomic.Int32
	s := tinyServer(t, &calls)
	lock := filepath.Join(t.TempDir(), "lock.json")
	const digest = "sha256/v1:0000000000000000000000000000000000000000000000000000000000000000"
	if err := os.WriteFile(lock, []byte(`{"version":1,"servers":{"remote-test":{"ghost":{"digest":"`+digest+`","shape":"`+digest+`"},`+
		`"hello":{"digest":"`+digest+`","shape":"`+digest+`"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"warn", "enforce"} {
		t.Run(mode, func(t *testing.T) {
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--lock", lock, "--lock-mode", mode))
			c.send(initialize)
			if a := c.answer(1); a["result"] == nil {
				t.Fatalf("initialize: %v", a)
			}
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			a := c.answer(2)
			missing := waitEvent(t, ledger, "tools_missing", 1)
			if got := mustJSON(missing[0]["missing"]); !strings.Contains(got, "ghost") {
				t.Errorf("tools_missing lists %s, want ghost", got)
			}
			if mode == "warn" {
				if a["result"] == nil {
					t.Fatalf("warn mode answered tools/list with %v, want the server's list", a)
				}
				c.in.Close()
				if code := c.exitCode(); code != 0 {
					t.Errorf("exit %d after the client left, want 0", code)
				}
				return
			}
			if msg := errorMessage(a); !strings.Contains(msg, "ghost") {
				t.Fatalf("enforce mode answered tools/list with %v, want an error naming ghost", a)
			}
			if code := c.exitCode(); code != 78 {
				t.Errorf("exit %d after an enforced lock broke, want 78", code)
			}
		})
	}
}
