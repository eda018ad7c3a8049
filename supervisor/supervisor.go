// Package supervisor owns the child's session: it routes the client's
// messages to the current child and answers the ones the child owes, stops
// the child with a ladder of signals, decides whether to start it again and
// replays the handshake to a new one. Each start is a generation (child.go)
// that replaces the last one whole; the session (session.go), the handshake
// to replay (replay.go) and the restart policy (policy.go) span them.
//
// A file per concept: route.go (the two relays' routing), owed.go (the
// answers the shim writes for the child), lock.go (lock enforcement),
// loop.go (the restart loop and one generation's run), ladder.go (stopping a
// child), drain.go (its pipes after its exit), switchwriter.go (its stdin).
//
// Spawning, signals and stderr are proc's; recording is phases'. It never
// reads the ledger, a client config or a lock file: the caller hands it
// CheckTools.
package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/tap"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Config is everything one shim session needs.
type Config struct {
	Name  string    // the server's label
	Spec  proc.Spec // what to run
	Guard []string  // argv of the guard process (see proc.StartGuard); nil for none
	// First, when set, is the first start, made by the caller with Spawn
	// (the same Spec and Guard) so that the server starts sooner.
	First *Launch

	Recorder  *tap.Recorder
	ClientIn  io.Reader // the client's requests
	ClientOut io.Writer // the wire back to the client: only the child's bytes and the shim's owed errors
	Stderr    io.Writer // the client's log; each Write must be atomic

	MaxObserve int           // bytes of one line the tap looks at
	KillGrace  time.Duration // client EOF -> SIGTERM -> SIGKILL steps; default 2s
	Policy     Policy
	Signals    <-chan os.Signal // signals to the shim, forwarded to the child's group
	// DivertNoise sends non-JSON server stdout lines to Stderr instead of the client.
	DivertNoise bool
	// ReplayTimeout bounds the handshake replay to a restarted child; default 10s.
	ReplayTimeout time.Duration
	// OnServerStderr sees each stderr line of the child (for server-reported events).
	OnServerStderr func(run string, pid int, line []byte)
	// CheckTools, when set, checks each complete tools/list the child returns
	// against the locked surface and returns the locked tools it lacks.
	CheckTools func(tools []json.RawMessage) (missing []string)
	// EnforceLock makes a violation fail the server for the client: the
	// tools/list is answered with an error, the child is stopped and the shim
	// exits 78 (EX_CONFIG) without restarting.
	EnforceLock bool
	// CaptureFull observes long lines whole up to MaxObserve (bodies are recorded).
	CaptureFull bool
	// Witnessed says whether outbound connections are witnessed (recorded in spawn_requested).
	Witnessed bool
	// Interactive says a person at a terminal is the client: no request is
	// on its way, so a session whose server is gone does not wait for one.
	Interactive bool
}

// event kinds the supervisor's loop waits on besides the child's exit.
type loopEvent struct {
	lockBroken bool // the child's tool surface broke the lock in enforce mode
	clientEOF  bool
	clientGone bool // writing to the client failed: nobody is listening
	err        error
}

// Supervisor runs the child for one client session. Its fields span the
// generations; what belongs to one process is its child. The loop goroutine
// owns them, except cur, lockBroken and replied (atomic), sess and mem (their
// own locks), cause, death and spawnErr (causeMu) and ended (routing), which
// the relays use too.
type Supervisor struct {
	cfg     Config
	sess    *session
	client  *jsonrpc.Wire
	childIn *switchWriter
	toChild *jsonrpc.Wire // the client's lines and the held ones, one whole line at a time
	// events wakes the loop. Sent to at most twice, never blocking: by the
	// client relay when it ends and by the first broken lock (lock.go).
	events chan loopEvent
	// cur is the current generation (child.go), replaced whole at each
	// start; the last one stays after its exit, until the next start.
	cur      atomic.Pointer[child]
	stopping bool // no more restarts: the client left or the shim was told to stop
	restart  *Restarter
	everHS   bool // some run completed a handshake (Exit.EverHandshook)
	mem      memory
	ownSeq   int // the shim's own request ids, unique over the session
	// lockBroken: an enforced lock was broken; the shim exits 78 whatever
	// the child's status. Set by a stdout relay (lock.go).
	lockBroken atomic.Bool
	cause      string           // why no child is serving, for the owed errors' messages (owed.go)
	death      *death           // how the last child ended, when it did: the owed errors' words
	spawnErr   *proc.SpawnError // the last start that failed, for their data
	causeMu    sync.Mutex       // guards cause, death and spawnErr: the client relay answers with them
	// replied is set when the client first had an answer, the server's or
	// the shim's, or when writing one failed; firstReply is closed then
	// (owed.go).
	replied    atomic.Bool
	firstReply chan struct{}
	// routing is held by the client relay while it routes a line. Run takes
	// it to set ended once the session is over: no line is answered or
	// recorded after Run returned and the recorder closed.
	routing sync.Mutex
	ended   bool
}

// Run supervises the child until it ends for good and returns the shim's exit
// status: the child's (128+signal when killed by one), 127/126 when it cannot
// be found/executed.
func Run(ctx context.Context, cfg Config) int {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 2 * time.Second
	}
	childIn := &switchWriter{}
	s := &Supervisor{
		cfg:     cfg,
		sess:    newSession(),
		client:  jsonrpc.NewWire(cfg.ClientOut),
		childIn: childIn,
		toChild: jsonrpc.NewWire(childIn),
		events:  make(chan loopEvent, 4),
		restart: NewRestarter(cfg.Policy),

		firstReply: make(chan struct{}),
	}
	s.cur.Store(&child{}) // generation 0: no start yet
	s.client.OnTerminate = func() { s.emit(phases.Transport, phases.PartialLineTerminated) }
	// A dead child's torn last line: dropped when the shim wrote after it,
	// delivered when the session ended with it.
	s.client.OnTail = func(l *jsonrpc.Line) { s.record(phases.FromServer, l) }
	// The client relay lives as long as the client's stdin: it exits at EOF or
	// when the process ends (a blocking read of stdin cannot be interrupted).
	go s.relayClient()
	status := s.loop(ctx)
	if !s.stopping && !s.lockBroken.Load() {
		s.awaitRequest(ctx)
	}
	// The client relay finishes the line it is routing, and routes no other.
	s.routing.Lock()
	s.ended = true
	s.routing.Unlock()
	s.client.Flush()
	return status
}

// emit records an event of the current run.
func (s *Supervisor) emit(p phases.Phase, event string, fields ...ledger.Field) {
	s.emitAt(time.Now(), p, event, fields...)
}

// emitAt records an event of the current run that happened at t.
func (s *Supervisor) emitAt(t time.Time, p phases.Phase, event string, fields ...ledger.Field) {
	c := s.cur.Load()
	s.cfg.Recorder.Emit(ledger.Record{Time: t, Run: c.run, PID: c.pid(), Phase: p, Event: event, Fields: fields})
}

// say tells the person reading the client's log, in order with the events.
func (s *Supervisor) say(format string, args ...any) {
	// The name, paths, errors and stderr lines in it came from outside the shim.
	s.cfg.Recorder.Say(termsafe.String(fmt.Sprintf("mcpshim %s: "+format, append([]any{s.cfg.Name}, args...)...)) + "\n")
}
