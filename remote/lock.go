package remote

import (
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// ExitConfig is EX_CONFIG: an enforced lock broke, a wiring problem a person
// must fix.
const ExitConfig = 78

// checkLock checks the tools of a tools/list answer against the lock, as the
// stdio supervisor does: pages are gathered until the one without a
// nextCursor, and a complete list that lacks locked tools is recorded and
// said. In enforce mode its answer is an error instead of the list (a client
// must not carry on believing the surface is complete) and the bridge stops
// with exit 78. It reports whether the answer may be forwarded.
func (b *bridge) checkLock(m message) bool {
	page, err := mcp.ParseToolsPage(m.result)
	b.mu.Lock()
	if err != nil {
		b.pages = nil
		b.mu.Unlock()
		return true
	}
	b.pages = append(b.pages, page.Tools...)
	if page.More {
		b.mu.Unlock()
		return true
	}
	tools := b.pages
	b.pages = nil
	b.mu.Unlock()
	missing := b.cfg.CheckTools(tools)
	if len(missing) == 0 {
		return true
	}
	mode := "warn"
	if b.cfg.EnforceLock {
		mode = "enforce"
	}
	b.emit(phases.Discovery, phases.ToolsMissing, ledger.F("missing", missing), ledger.F("mode", mode))
	b.say("tool surface lock: %d locked tool(s) missing: %s", len(missing), strings.Join(missing, ", "))
	if !b.cfg.EnforceLock {
		return true
	}
	text := fmt.Sprintf("mcpshim: server %s lacks locked tools: %s", b.cfg.Name, strings.Join(missing, ", "))
	if _, err := b.wire.WriteMessage(errorAnswer(m.rawID, text, map[string]any{"missing": missing})); err != nil {
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
