package lock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// ExitConfig is EX_CONFIG, a wiring problem a person must fix: the status a
// shim exits with when an enforced lock broke, and for every other
// configuration mcpshim refuses.
const ExitConfig = 78

// ForServer reads the lock at path for a session of server: the check of
// its tool lists, and a notice when the lock does not name the server (then
// nothing is missing). A lock that cannot be read fails closed; so does one
// without the server in enforce mode. err says what to do.
func ForServer(path, server string, enforce bool) (check func([]json.RawMessage) []string, notice string, err error) {
	l, err := Read(path)
	if err != nil {
		return nil, "", fmt.Errorf("--lock %s: %v; regenerate it with `mcpshim lock`", path, err)
	}
	if _, ok := l.Servers[server]; !ok {
		notice = fmt.Sprintf("--lock %s has no server %q (its servers are the config's entry names; set --name)", path, server)
		if enforce {
			return nil, "", errors.New(notice)
		}
	}
	return Checker(l, server), notice, nil
}

// Checker is the check a session makes of a server's complete tool list
// against l: the locked tools the list lacks.
func Checker(l *Lock, server string) func([]json.RawMessage) []string {
	return func(raw []json.RawMessage) []string {
		tools := make([]Tool, 0, len(raw))
		for _, r := range raw {
			if t, err := NewTool(r); err == nil {
				tools = append(tools, t)
			}
		}
		return l.Check(server, tools).Missing
	}
}

// Pages gathers the pages of one tools/list answer until the last. The zero
// value is ready to use; it is not safe for concurrent use.
type Pages struct {
	tools []json.RawMessage
}

// Add takes one page's result. After the last page (no nextCursor) it
// returns the whole list and true, and starts over; a page that cannot be
// read drops what was gathered.
func (p *Pages) Add(result []byte) ([]json.RawMessage, bool) {
	page, err := mcp.ParseToolsPage(result)
	if err != nil {
		p.tools = nil
		return nil, false
	}
	p.tools = append(p.tools, page.Tools...)
	if page.More {
		return nil, false
	}
	tools := p.tools
	p.tools = nil
	return tools, true
}

// Reset drops what was gathered.
func (p *Pages) Reset() { p.tools = nil }

// Missing is a complete tool list that lacks locked tools, as a session
// reports it: a tools_missing record, a line for the client's log, and in
// enforce mode the error answered instead of the list (a client must not
// carry on believing the surface is complete).
type Missing struct {
	Server  string
	Tools   []string
	Enforce bool
}

// Fields are the tools_missing record's.
func (m Missing) Fields() []ledger.Field {
	mode := "warn"
	if m.Enforce {
		mode = "enforce"
	}
	return []ledger.Field{ledger.F(phases.FieldMissing, m.Tools), ledger.F(phases.FieldMode, mode)}
}

// Notice is the line for the person reading the client's log.
func (m Missing) Notice() string {
	return fmt.Sprintf("tool surface lock: %d locked tool(s) missing: %s", len(m.Tools), strings.Join(m.Tools, ", "))
}

// Report records the tools_missing event and says the notice, as both the
// stdio supervisor and the remote bridge do for a complete list that lacks
// locked tools. It reports whether the list may still reach the client:
// in warn mode it may; in enforce mode the caller answers Error instead
// and stops the session.
func (m Missing) Report(emit func(p phases.Phase, event string, fields ...ledger.Field), say func(format string, args ...any)) (forward bool) {
	emit(phases.Discovery, phases.ToolsMissing, m.Fields()...)
	say("%s", m.Notice())
	return !m.Enforce
}

// Error is the message of the error answered instead of the list.
func (m Missing) Error() string {
	return fmt.Sprintf("mcpshim: server %s lacks locked tools: %s", m.Server, strings.Join(m.Tools, ", "))
}
