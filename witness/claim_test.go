package witness

import (
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/phases"
)

// TestServerClaim: a server's own event is kept as it said it; a claim of an
// event only the shim writes becomes forged_event with what it claimed.
func TestServerClaim(t *testing.T) {
	now := time.Now()
	tests := []struct{ event, wantEvent, wantClaimed string }{
		{"cache_warmed", "cache_warmed", ""},
		{phases.Exited, phases.ForgedEvent, phases.Exited},
		{phases.ToolCallResponded, phases.ForgedEvent, phases.ToolCallResponded},
	}
	for _, tt := range tests {
		r := ServerClaim(now, "run_A", 7, "execution", tt.event, [][2]string{{"k", "v"}})
		claimed := ""
		for _, f := range r.Fields {
			if f.Key == "claimed" {
				claimed, _ = f.Value.(string)
			}
		}
		if r.Event != tt.wantEvent || claimed != tt.wantClaimed || r.Origin != phases.OriginServer {
			t.Errorf("ServerClaim(%q) = event %q claimed %q origin %q, want %q claimed %q origin %q",
				tt.event, r.Event, claimed, r.Origin, tt.wantEvent, tt.wantClaimed, phases.OriginServer)
		}
	}
}
