package supervisor

import (
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// checkLock checks a complete tool list against the lock. In enforce mode a
// violation is answered with an error instead of the list — a client must
// not carry on believing the surface is complete — and the shim stops the
// server and exits 78. It reports whether the line may be forwarded.
func (s *Supervisor) checkLock(c *child, l *jsonrpc.Line) bool {
	page, err := mcp.ParseToolsPage(l.Msg.Result)
	if l.Truncated || l.Msg.Kind != mcp.Response || err != nil {
		c.pages = nil
		return true
	}
	c.pages = append(c.pages, page.Tools...)
	if page.More {
		return true
	}
	missing := s.cfg.CheckTools(c.pages)
	c.pages = nil
	if len(missing) == 0 {
		return true
	}
	mode := "warn"
	if s.cfg.EnforceLock {
		mode = "enforce"
	}
	s.emit(phases.Discovery, phases.ToolsMissing, ledger.F("missing", missing), ledger.F("mode", mode))
	s.say("tool surface lock: %d locked tool(s) missing: %s", len(missing), strings.Join(missing, ", "))
	if !s.cfg.EnforceLock {
		return true
	}
	// Over the hold, the list is already on the wire: it stays the answer,
	// but the server is stopped all the same.
	if l.Held {
		msg := fmt.Sprintf("mcpshim: server %s lacks locked tools: %s", s.cfg.Name, strings.Join(missing, ", "))
		s.writeOwedError(l.Msg.RawID, msg, map[string]any{"run": c.run, "missing": missing})
	}
	// The decision is kept before the loop is told, and the loop is told
	// once: this relay never waits on it (the loop may be draining, reading
	// no events, while this relay holds the client's wire). events has room
	// for this send and the client relay's one.
	if s.lockBroken.CompareAndSwap(false, true) {
		s.events <- loopEvent{lockBroken: true}
	}
	return !l.Held
}

// exitConfig is EX_CONFIG: a wiring problem a person must fix.
const exitConfig = 78
