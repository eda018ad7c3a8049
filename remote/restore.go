package remote

// What a re-initialized session gets back from the old one, as the stdio
// supervisor gives a restarted server: the client's log level and resource
// subscriptions, replayed under the shim's own ids; and, when the server's
// tool list differs from the one the client last saw,
// notifications/tools/list_changed so that the client lists them again.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// listChanged is the notification a client re-lists its tools on.
var listChanged = []byte(`{"jsonrpc":"2.0","method":"` + mcp.NotificationToolListChanged + `"}`)

// remember keeps the client's requests a new session must see again; the
// caller holds mu.
func (b *bridge) remember(m message, line []byte) {
	switch m.method {
	case mcp.MethodSetLevel:
		b.level = append([]byte(nil), line...)
	case mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		uri := mcp.String(mcp.Member(mcp.Member(line, "params"), "uri"))
		if m.method == mcp.MethodUnsubscribe {
			delete(b.subs, uri)
		} else {
			b.subs[uri] = append([]byte(nil), line...)
		}
	}
}

// listed records the digest of a complete tools/list the client got; the
// caller holds mu.
func (b *bridge) listed(result []byte) {
	if page, err := mcp.ParseToolsPage(result); err == nil && !page.More {
		b.toolsSeen = toolsDigest(page.Tools)
	}
}

func toolsDigest(tools []json.RawMessage) string {
	h := sha256.New()
	for _, t := range tools {
		h.Write(t)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// restore replays the log level and the subscriptions into session, then
// compares the server's tools with the ones the client saw. initResult is
// the new session's initialize result: the notification goes only to a
// client whose server declared tools.listChanged.
func (b *bridge) restore(session string, initResult []byte) {
	b.mu.Lock()
	lines := make([][]byte, 0, len(b.subs)+1)
	if b.level != nil {
		lines = append(lines, b.level)
	}
	for _, l := range b.subs {
		lines = append(lines, l)
	}
	seen := b.toolsSeen
	b.mu.Unlock()
	restored := 0
	for _, l := range lines {
		if _, _, _, err := b.ownRequest("restore", l, session); err == nil {
			restored++
		}
	}
	changed := false
	if seen != "" && string(mcp.Member(mcp.Member(mcp.Member(initResult, "capabilities"), "tools"), "listChanged")) == "true" {
		answer, _, _, err := b.ownRequest("tools", []byte(`{"jsonrpc":"2.0","id":0,"method":"`+mcp.MethodListTools+`"}`), session)
		if err == nil {
			page, perr := mcp.ParseToolsPage(inspect(answer).result)
			changed = perr == nil && toolsDigest(page.Tools) != seen
		}
	}
	b.emit(phases.Supervision, phases.SessionRestored, ledger.F("restored", restored), ledger.F("of", len(lines)), ledger.F("tools_changed", changed))
	if changed {
		b.emit(phases.Supervision, phases.ToolsChangedAfterRestart, ledger.F("notified", true))
		if _, err := b.wire.WriteMessage(listChanged); err != nil {
			b.clientGone()
		}
	}
}
