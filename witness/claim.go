package witness

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// ServerClaim is the record of an event a server reported itself, with
// origin "server" and its values redacted. A server cannot forge an event
// only the shim may write: such a claim is recorded as forged_event, with
// the event it claimed.
func ServerClaim(now time.Time, run string, pid int, phase, event string, fields [][2]string) ledger.Record {
	fs := make([]ledger.Field, 0, len(fields)+1)
	for _, kv := range fields {
		fs = append(fs, ledger.F(kv[0], redact.String(kv[1])))
	}
	if phases.ShimOwned(event) {
		fs = append(fs, ledger.F("claimed", event))
		event = phases.ForgedEvent
	}
	return ledger.Record{Time: now, Run: run, PID: pid, Origin: phases.OriginServer, Phase: phases.Phase(phase), Event: event, Fields: fs}
}
