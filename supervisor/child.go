package supervisor

import (
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
)

// child is one generation: one start of the server and what belongs to that
// process alone. runChild makes one at each start and publishes it whole in
// Supervisor.cur, replacing the last one; its fields do not change once it
// is published, except those marked below. What outlives a process (the
// session, the handshake to replay, the restart policy, the cause no child
// serves, the exit status) is on Supervisor.
//
// Who reads it, from which goroutine:
//   - the loop (runChild, supervise, replay, drain): every field;
//   - the child's stdout relay: its own child, bound when the relay is made
//     (never cur: a relay may outlive its generation by a few lines). It
//     writes pages and own and sets hsAt;
//   - the client relay: cur, loaded once per line, for the run an event or
//     an owed error names and the stderr tail an owed error quotes.
type child struct {
	gen int
	run string
	// p is the process; nil while the start is requested and for a start
	// that failed.
	p *proc.Process
	// tail holds the last lines of its stderr. A start that failed keeps the
	// previous generation's: the owed errors and restarts_exhausted quote the
	// server's last words.
	tail   *proc.Tail
	runner bool    // a package runner (runner.go)
	start  *Launch // its start, with its guard (launch.go)
	// hsAt is the unix ns of its first answer, 0 before it: set by the
	// stdout relay, read by the loop.
	hsAt atomic.Int64
	// own takes its answers to the shim's own requests, swallowed from its
	// stdout by the relay, for ownCall.
	own chan []byte
	// pages are the tools of the tools/list being answered (lock.go); only
	// its stdout relay touches them.
	pages lock.Pages
}

// pid is the process id, 0 when no process runs.
func (c *child) pid() int {
	if c.p == nil {
		return 0
	}
	return c.p.Pid
}

// noteHandshake remembers when the child completed a handshake, for the
// restart policy: any successful answer counts (initialize, server/discover,
// or a modern request).
func (c *child) noteHandshake(l *jsonrpc.Line) {
	if l.Msg.Kind == mcp.Response {
		c.handshook()
	}
}

// handshook marks the run's first answer, to the client or to the shim's
// replay: a package runner's install is over.
func (c *child) handshook() {
	if c.hsAt.CompareAndSwap(0, time.Now().UnixNano()) && c.runner {
		c.tellGuard(proc.GuardReady)
	}
}

// handshakeAt is when the run completed a handshake; zero before.
func (c *child) handshakeAt() time.Time {
	if ns := c.hsAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}
