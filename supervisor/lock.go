package supervisor

import (
	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

// checkLock checks a complete tool list against the lock. In enforce mode a
// violation is answered with an error instead of the list — a client must
// not carry on believing the surface is complete — and the shim stops the
// server and exits 78. It reports whether the line may be forwarded.
func (s *Supervisor) checkLock(c *child, l *jsonrpc.Line) bool {
	if l.Truncated || l.Msg.Kind != mcp.Response {
		c.pages.Reset()
		return true
	}
	tools, complete := c.pages.Add(l.Msg.Result)
	if !complete {
		return true
	}
	missing := lock.Missing{Server: s.cfg.Name, Tools: s.cfg.CheckTools(tools), Enforce: s.cfg.EnforceLock}
	if len(missing.Tools) == 0 || missing.Report(s.emit, s.say) {
		return true
	}
	// Over the hold, the list is already on the wire: it stays the answer,
	// but the server is stopped all the same.
	if l.Held {
		s.writeOwedError(l.Msg.RawID, missing.Error(), map[string]any{"run": c.run, "missing": missing.Tools})
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
