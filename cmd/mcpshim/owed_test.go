package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// oneOwedError checks that lines are exactly one JSON-RPC error for id 1
// whose message has want in it, and returns its message.
func oneOwedError(t *testing.T, lines []string, want string) string {
	t.Helper()
	if len(lines) != 1 {
		t.Fatalf("got %d lines %q, want exactly one error for id 1", len(lines), lines)
	}
	if !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"error":`) {
		t.Fatalf("got %s, want the shim's error for id 1", lines[0])
	}
	msg, _ := owedError(t, lines[0])
	if !strings.Contains(msg, want) {
		t.Fatalf("got message %q, want it to name %q", msg, want)
	}
	return msg
}

// ledgerWhole checks that every record reached the ledger and that the
// request the client was answered for is recorded as pending_failed.
func ledgerWhole(t *testing.T, es []ledger.Entry) {
	t.Helper()
	if lost := find(es, "records_lost"); lost != nil {
		n, _ := lost.Int("count")
		t.Errorf("records_lost count=%d; events %v, want every record written", n, events(es))
	}
	pf := find(es, "pending_failed")
	if pf == nil || pf.Str("request_id") != "1" || pf.Str("method") != "initialize" {
		t.Errorf("pending_failed = %+v; events %v, want one for initialize 1 (the client got its error)", pf, events(es))
	}
}

// TestMissingBinaryLedgerWhole: the client of a command that does not exist
// gets its error, and the ledger has every record: pending_failed for that
// error, and restarts_exhausted with the 127 the shim exits with. The error
// used to be written by the client relay after the recorder had closed: in
// 4 runs of 5 its record was lost (records_lost) and exit_code said 0.
func TestMissingBinaryLedgerWhole(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := start(t, true, nil, "no-such-mcp-server-xyz")
			if err := s.client.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`); err != nil {
				t.Fatalf("send initialize: %v", err)
			}
			oneOwedError(t, s.readToEOF(), `cannot start: executable file not found in PATH: "no-such-mcp-server-xyz"`)
			if got := s.finish(); got != 127 {
				t.Errorf("exit status %d, want 127", got)
			}
			es := s.entries()
			ledgerWhole(t, es)
			rx := find(es, "restarts_exhausted")
			if rx == nil {
				t.Fatalf("no restarts_exhausted; events %v", events(es))
			}
			if code, _ := rx.Int("exit_code"); code != 127 {
				t.Errorf("restarts_exhausted exit_code = %d, want 127", code)
			}
		})
	}
}

// TestDeadServerAnswersLateRequest: a server that died at once, before the
// client wrote anything. Whenever the client's initialize comes — with the
// child still being reaped, or after the shim gave up — the shim reads it and
// answers it with one error naming the cause, in the same words, then exits
// with the server's status; the client never gets EPIPE and an empty stdout. The delays are the
// client's behaviour; what the test waits on is the shim's stdout ending.
func TestDeadServerAnswersLateRequest(t *testing.T) {
	cases := []struct {
		name  string
		delay time.Duration
		after string // a ledger event to wait for before sending
	}{
		{"at once", 0, ""},
		{"10ms", 10 * time.Millisecond, ""},
		{"50ms", 50 * time.Millisecond, ""},
		{"300ms", 300 * time.Millisecond, ""},
		{"after giving up", 0, "restarts_exhausted"},
	}
	for _, c := range cases {
		for i := range 3 {
			t.Run(fmt.Sprintf("%s/%d", c.name, i), func(t *testing.T) {
				s := start(t, true, nil, "fixture", "exit-early")
				time.Sleep(c.delay)
				if c.after != "" {
					waitEvent(t, s.ledger, c.after, eventWait)
				}
				if err := s.client.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`); err != nil {
					t.Fatalf("send initialize: %v (the shim did not wait for it)", err)
				}
				// The shim ends its stdout while the client's stdin is still open,
				// with the same words whenever the request came.
				want := "mcpshim: server test exited with code 1 before answering: fatal: missing API key"
				if msg := oneOwedError(t, s.readToEOF(), "fatal: missing API key"); msg != want {
					t.Errorf("got message %q, want %q", msg, want)
				}
				if got := s.finish(); got != 1 {
					t.Errorf("exit status %d, want 1 (the server's)", got)
				}
				ledgerWhole(t, s.entries())
			})
		}
	}
}

// TestStoppedByShimSaysWho: a server the shim stopped because the client
// left is not said to have died on its own. The client here sent initialize
// and closed its stdin at once (a script, or a client being killed), still
// reading its stdout.
func TestStoppedByShimSaysWho(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		how  string
		log  string // the run's verdict, the shim's last line about it
	}{
		{"deaf until ended", deafServer, "stopped by mcpshim after the client left: killed by " + deafEnd,
			"before the handshake; mcpshim stopped the server (killed by " + deafEnd + ")"},
		{"exits 0 on stdin EOF", []string{"fixture", "silent"}, "stopped by mcpshim after the client left: exited with code 0",
			"before the handshake; mcpshim closed the server's stdin and it exited (exit 0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, true, []string{"--kill-grace", "200ms"}, c.argv...)
			if err := s.client.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`); err != nil {
				t.Fatalf("send initialize: %v", err)
			}
			waitEvent(t, s.ledger, "initialize_received", eventWait)
			s.stdin.Close()
			oneOwedError(t, s.readToEOF(), c.how)
			s.finish()
			if log := s.stderr.String(); !strings.Contains(log, "mcpshim test: ENDED: the client left ") || !strings.Contains(log, c.log) {
				t.Errorf("the shim's stderr does not say the run ENDED and %q:\n%s", c.log, log)
			}
			if pf := find(s.entries(), "pending_failed"); pf == nil || !strings.Contains(pf.Str("message"), c.how) {
				t.Errorf("pending_failed = %+v, want its message to say %q", pf, c.how)
			}
		})
	}
}
