package main

import (
	"testing"

	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestStartRecordsKeepTheirTimes: the server starts before the ledger is
// open, and its start is recorded once it is: spawn_requested first, then
// spawned or spawn_failed, of one run, each with the time it happened.
func TestStartRecordsKeepTheirTimes(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"fixture", "healthy"}, phases.Spawned},
		{[]string{"no-such-mcp-server-xyz"}, phases.SpawnFailed},
	} {
		s := start(t, true, nil, tt.argv...)
		if tt.want == phases.Spawned {
			s.call("1", "initialize", initParams)
		}
		s.finish()
		es := s.entries()
		if len(es) < 3 || es[0].Event != phases.SpawnRequested || es[1].Event != tt.want || es[0].Run != es[1].Run {
			t.Fatalf("%v: ledger begins %v, want spawn_requested, %s of one run", tt.argv, events(es), tt.want)
		}
		if next := es[2]; es[1].Time.Before(es[0].Time) || next.Time.Before(es[1].Time) {
			t.Errorf("%v: times %v, %v, %v (%s, %s, %s): want them in order", tt.argv,
				es[0].Time, es[1].Time, next.Time, es[0].Event, es[1].Event, next.Event)
		}
	}
}
