//go:build !windows

package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// era is the handshake a client and a server end up with.
type era int

const (
	legacyEra   era = iota // initialize, notifications/initialized
	modernEra              // 2026-07-28: server/discover, no initialize
	fallbackEra            // server/discover fails, then initialize
)

func (e era) String() string {
	return [...]string{"legacy", "modern", "fallback"}[e]
}

func eraOf(c client, s server) era {
	switch {
	case !c.modern:
		return legacyEra
	case s.modern:
		return modernEra
	}
	return fallbackEra
}

// handshakes are the events each era's handshake leaves, in order.
var handshakes = map[era][]string{
	legacyEra:   {phases.InitializeReceived, phases.InitializeResponded, phases.InitializedReceived},
	modernEra:   {phases.DiscoverReceived, phases.DiscoverResponded},
	fallbackEra: {phases.DiscoverReceived, phases.DiscoverFailed, phases.InitializeReceived, phases.InitializeResponded, phases.InitializedReceived},
}

// foreign are events a clean session of the era must not have.
var foreign = map[era][]string{
	legacyEra:   {phases.DiscoverReceived, phases.DiscoverResponded, phases.DiscoverFailed},
	modernEra:   {phases.InitializeReceived, phases.InitializeResponded, phases.InitializeFailed, phases.DiscoverFailed},
	fallbackEra: {phases.InitializeFailed},
}

// troubles are events no clean session has.
var troubles = []string{
	phases.SpawnFailed, phases.HandshakeTimeout, phases.ToolsListFailed, phases.UnknownResponse,
	phases.StdoutNoise, phases.ClientNoise, phases.MessageTruncated, phases.PartialLineTerminated,
	phases.PendingFailed, phases.KillRequested, phases.SignalReceived, phases.RestartScheduled,
	phases.RestartsExhausted, phases.RecordsLost,
}

// expectation is what the ledger of one clean session must show.
type expectation struct {
	era   era
	tools int    // tools the client listed
	call  string // the tool called, "" for none
}

// ledgerProblems lists how the shim's own records of one clean session
// break want: the era's handshake exactly once, a complete tool list, the
// call answered with success, and an orderly end with exit code 0.
func ledgerProblems(entries []ledger.Entry, want expectation) []string {
	var problems []string
	var events []string
	for _, e := range entries {
		if e.Origin == "" {
			events = append(events, e.Event)
		}
	}
	order := slices.Concat([]string{phases.SpawnRequested, phases.Spawned}, handshakes[want.era],
		[]string{phases.ToolsListReceived, phases.ToolsListResponded})
	if want.call != "" {
		order = append(order, phases.ToolCallReceived, phases.ToolCallResponded)
	}
	order = append(order, phases.ClientDisconnected, phases.Exited)
	if missing := notInOrder(events, order); missing != "" {
		problems = append(problems, fmt.Sprintf("%s handshake: no %s in order %v", want.era, missing, order))
	}
	done := phases.InitializeResponded
	if want.era == modernEra {
		done = phases.DiscoverResponded
	}
	if n := count(events, done); n != 1 {
		problems = append(problems, fmt.Sprintf("%s: got %d, want 1 (one good handshake)", done, n))
	}
	// Once the client has left, how fast the server exits decides whether the
	// ladder (or the client's own SIGTERM) comes into play: on a loaded
	// machine it may, and that is no trouble of the session.
	during := events
	if i := slices.Index(events, phases.ClientDisconnected); i >= 0 {
		during = events[:i]
	}
	for _, ev := range slices.Concat(foreign[want.era], troubles) {
		seen := events
		if ev == phases.KillRequested || ev == phases.SignalReceived {
			seen = during
		}
		if slices.Contains(seen, ev) {
			problems = append(problems, fmt.Sprintf("%s in a clean %s session", ev, want.era))
		}
	}
	for _, e := range entries {
		if e.Origin != "" {
			continue
		}
		switch e.Event {
		case phases.ToolsListResponded:
			if n, _ := e.Int("tool_count"); !e.Bool("complete") || n != int64(want.tools) {
				problems = append(problems, fmt.Sprintf("tools_list_responded: got complete=%v tool_count=%d, want complete=true tool_count=%d",
					e.Bool("complete"), n, want.tools))
			}
		case phases.ToolCallResponded:
			if e.Str("tool") != want.call || e.Str("outcome") != "success" {
				problems = append(problems, fmt.Sprintf("tool_call_responded: got tool=%q outcome=%q, want tool=%q outcome=success",
					e.Str("tool"), e.Str("outcome"), want.call))
			}
		case phases.Exited:
			if code, _ := e.Int("exit_code"); code != 0 || e.Str("signal") != "" {
				problems = append(problems, fmt.Sprintf("exited: got exit_code=%d signal=%q, want 0", code, e.Str("signal")))
			}
		}
	}
	return problems
}

// notInOrder returns the first of want that is not in events after the
// previous one, or "".
func notInOrder(events, want []string) string {
	i := 0
	for _, ev := range events {
		if i < len(want) && ev == want[i] {
			i++
		}
	}
	if i < len(want) {
		return want[i]
	}
	return ""
}

func count(events []string, ev string) int {
	n := 0
	for _, e := range events {
		if e == ev {
			n++
		}
	}
	return n
}

// readLedger decodes every line of a ledger file.
func readLedger(t *testing.T, path string) []ledger.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	defer f.Close()
	var entries []ledger.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		e, err := ledger.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("ledger %s: line %d: %v", path, len(entries)+1, err)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("ledger %s: %v", path, err)
	}
	return entries
}

// eventList is the shim's own events, for failure messages.
func eventList(entries []ledger.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		if e.Origin == "" {
			fmt.Fprintf(&b, " %s", e.Event)
		}
	}
	return b.String()
}

func TestLedgerProblems(t *testing.T) {
	ev := func(names ...string) []ledger.Entry {
		var out []ledger.Entry
		for _, n := range names {
			e := ledger.Entry{Event: n, Fields: map[string]any{}}
			switch n {
			case phases.ToolsListResponded:
				e.Fields = map[string]any{"complete": true, "tool_count": json.Number("2")}
			case phases.ToolCallResponded:
				e.Fields = map[string]any{"tool": "echo", "outcome": "success"}
			case phases.Exited:
				e.Fields = map[string]any{"exit_code": json.Number("0")}
			}
			out = append(out, e)
		}
		return out
	}
	start := []string{phases.SpawnRequested, phases.Spawned}
	list := []string{phases.ToolsListReceived, phases.ToolsListResponded, phases.ToolCallReceived, phases.ToolCallResponded}
	end := []string{phases.ClientDisconnected, phases.Exited}
	session := func(hs ...string) []ledger.Entry { return ev(slices.Concat(start, hs, list, end)...) }
	tests := []struct {
		name    string
		entries []ledger.Entry
		era     era
		clean   bool
	}{
		{"legacy", session(handshakes[legacyEra]...), legacyEra, true},
		{"modern", session(handshakes[modernEra]...), modernEra, true},
		{"fallback", session(handshakes[fallbackEra]...), fallbackEra, true},
		{"fallback read as modern", session(handshakes[fallbackEra]...), modernEra, false},
		{"modern read as fallback", session(handshakes[modernEra]...), fallbackEra, false},
		{"legacy read as fallback", session(handshakes[legacyEra]...), fallbackEra, false},
		{"two initializes", session(slices.Concat(handshakes[legacyEra], handshakes[legacyEra])...), legacyEra, false},
		{"timeout", session(append(handshakes[legacyEra], phases.HandshakeTimeout)...), legacyEra, false},
		{"no exit", ev(slices.Concat(start, handshakes[legacyEra], list)...), legacyEra, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ledgerProblems(tt.entries, expectation{era: tt.era, tools: 2, call: "echo"})
			if clean := len(got) == 0; clean != tt.clean {
				t.Errorf("ledgerProblems(%s as %s): got problems %q, want clean=%v", tt.name, tt.era, got, tt.clean)
			}
		})
	}
}
