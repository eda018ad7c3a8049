//go:build !windows

package main

import (
	"strings"
	"testing"
)

// slowStartEntry is a healthy server that takes d to start, as a cold npx
// install does, and then answers at once.
func slowStartEntry(t *testing.T, d string) map[string]any {
	return map[string]any{"command": "sh", "args": []string{"-c", "sleep " + d + "; exec \"$0\" fixture healthy", builtShim(t)}}
}

// Seed 000's six counterparts through the command, each with the seed's
// outcome and detail.
func TestProbeSeedCounterparts(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out real 2s and 5s deadlines")
	}
	cases := []struct {
		timeout string
		want    map[string]string // server -> outcome and detail substring
	}{
		{"5s", map[string]string{
			"instant": "READY healthy 1.0.0", "slow": "READY healthy 1.0.0", "silent": "TIMEOUT no answer to initialize within 5s",
			"crash": "EXITED fatal: missing API key", "reject": "PROTOCOL_ERROR unsupported protocolVersion",
		}},
		{"2s", map[string]string{"slow": "TIMEOUT no answer to initialize within 2s"}},
	}
	for _, c := range cases {
		t.Run(c.timeout, func(t *testing.T) {
			t.Parallel()
			cfg := writeMCPConfig(t, t.TempDir(), map[string]any{
				"instant": fixtureEntry(t, "healthy"), "slow": slowStartEntry(t, "3"), "silent": fixtureEntry(t, "silent"),
				"crash": fixtureEntry(t, "exit-early"), "reject": fixtureEntry(t, "protocol-reject"),
			})
			code, rep := probeJSON(t, probeEnv(t.TempDir()), "--config", cfg, "--timeout", c.timeout, "--retries", "0")
			for server, want := range c.want {
				r := probeResult(t, rep, server)
				outcome, detail, _ := strings.Cut(want, " ")
				if string(r.Outcome) != outcome || !strings.Contains(r.Detail, detail) {
					t.Errorf("probe --timeout %s: %s got %s %q, want %s containing %q", c.timeout, server, r.Outcome, r.Detail, outcome, detail)
				}
			}
			if code != exitConfig {
				t.Errorf("probe --timeout %s with a crash and a rejection: got exit %d, want %d", c.timeout, code, exitConfig)
			}
		})
	}
}
