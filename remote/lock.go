package remote

import (
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
)

// checkLock checks the tools of a tools/list answer against the lock, as the
// stdio supervisor does: pages are gathered until the one without a
// nextCursor, and a complete list that lacks locked tools is recorded and
// said. In enforce mode its answer is an error instead of the list (a client
// must not carry on believing the surface is complete) and the bridge stops
// with exit 78 (lock.ExitConfig). It reports whether the answer may be
// forwarded.
func (b *bridge) checkLock(m message) bool {
	b.mu.Lock()
	tools, complete := b.pages.Add(m.result)
	b.mu.Unlock()
	if !complete {
		return true
	}
	missing := lock.Missing{Server: b.cfg.Name, Tools: b.cfg.CheckTools(tools), Enforce: b.cfg.EnforceLock}
	if len(missing.Tools) == 0 || missing.Report(b.emit, b.say) {
		return true
	}
	if _, err := b.wire.WriteMessage(errorAnswer(m.rawID, missing.Error(), map[string]any{"missing": missing.Tools})); err != nil {
		b.clientGone()
	}
	b.lockOnce.Do(func() { close(b.lockBroken) })
	return false
}

// toolsList reports whether m answers a tools/list the client sent; the
// caller holds mu and has not yet removed the request from pending.
func (b *bridge) toolsList(m message) bool {
	c := b.pending[m.id]
	return c != nil && c.method == mcp.MethodListTools && m.isResult() && b.cfg.CheckTools != nil
}
