package remote

// What a re-initialized session gets back from the old one, as the stdio
// supervisor gives a restarted server: the client's log level and resource
// subscriptions, replayed under the shim's own ids; and, when the server's
// tool list differs from the one the client last saw,
// notifications/tools/list_changed so that the client lists them again.

import (
	"encoding/json"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// listChanged is the notification a client re-lists its tools on.
var listChanged = []byte(`{"jsonrpc":"2.0","method":"` + mcp.NotificationToolListChanged + `"}`)

// remember keeps the client's requests a new session must see again, and
// notes a tools/list it pages through; the caller holds mu.
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
	case mcp.MethodListTools:
		if mcp.IsFirstPage(mcp.Member(line, "params")) {
			b.toolPages = map[string]string{}
		}
		b.listID = m.id
	}
}

// listed adds a page of the tools/list the client pages through (an answer
// to id); the last page makes the list the one the client saw. The caller
// holds mu.
func (b *bridge) listed(id idKey, result []byte) {
	page, err := mcp.ParseToolsPage(result)
	if err != nil || b.toolPages == nil || id != b.listID {
		return
	}
	addPage(b.toolPages, page.Tools)
	if !page.More {
		b.toolsSeen, b.toolPages = b.toolPages, nil
	}
}

// addPage adds the tools of one page to a list by name.
func addPage(list map[string]string, tools []json.RawMessage) {
	for _, raw := range tools {
		if name, digest, err := mcp.ToolDigest(raw); err == nil {
			list[name] = digest
		}
	}
}

// serverTools pages through the server's tools/list in session, as the
// shim's own requests.
func (b *bridge) serverTools(session string) (map[string]string, error) {
	var pager mcp.Pager
	params := []byte(`{}`)
	for {
		req := []byte(`{"jsonrpc":"2.0","id":0,"method":"` + mcp.MethodListTools + `","params":` + string(params) + `}`)
		answer, _, _, err := b.ownRequest("tools", req, session)
		if err != nil {
			return nil, err
		}
		cursor, more, err := pager.Add(inspect(answer).result)
		if err != nil {
			return nil, err
		}
		if !more {
			list := map[string]string{}
			addPage(list, pager.Tools)
			return list, nil
		}
		params, _ = json.Marshal(mcp.CursorParams(cursor, false))
	}
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
	var added, removed []string
	changed := false
	if seen != nil && string(mcp.Member(mcp.Member(mcp.Member(initResult, "capabilities"), "tools"), "listChanged")) == "true" {
		if now, err := b.serverTools(session); err == nil {
			var redefined bool
			added, removed, redefined = mcp.DiffTools(seen, now)
			changed = redefined || len(added) > 0 || len(removed) > 0
		} else {
			b.emit(phases.Supervision, phases.ReplayFailed, ledger.F(phases.FieldMethod, mcp.MethodListTools), ledger.F(phases.FieldError, b.scrub(err.Error())))
		}
	}
	b.emit(phases.Supervision, phases.SessionRestored, ledger.F("restored", restored), ledger.F("of", len(lines)), ledger.F("tools_changed", changed))
	if changed {
		b.emit(phases.Supervision, phases.ToolsChangedAfterRestart, ledger.F("added", added), ledger.F("removed", removed), ledger.F("notified", true))
		if _, err := b.wire.WriteMessage(listChanged); err != nil {
			b.clientGone()
		}
	}
}
