// Package supervisor owns the child's session: it routes the client's
// messages to the current child and answers the ones the child owes, stops
// the child with a ladder of signals, decides whether to start it again and
// replays the handshake to a new one. Spawning, signals and stderr are proc's;
// recording is phases'; it never reads the ledger.
package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Config is everything one shim session needs.
type Config struct {
	Name  string    // the server's label
	Spec  proc.Spec // what to run
	Guard []string  // argv of the guard process (see proc.StartGuard); nil for none

	Recorder  *phases.Recorder
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
// owns them, except cur (atomic), sess and mem (their own locks) and cause
// and spawnErr (causeMu), which the relays read too.
type Supervisor struct {
	cfg     Config
	sess    *session
	client  *jsonrpc.Wire
	childIn *switchWriter
	toChild *jsonrpc.Wire // the client's lines and the held ones, one whole line at a time
	events  chan loopEvent
	// cur is the current generation (child.go), replaced whole at each
	// start; the last one stays after its exit, until the next start.
	cur      atomic.Pointer[child]
	stopping bool // no more restarts: the client left or the shim was told to stop
	restart  *Restarter
	everHS   bool // some run completed a handshake (Exit.EverHandshook)
	mem      memory
	ownSeq   int              // the shim's own request ids, unique over the session
	status   int              // when set, the shim's exit status whatever the child's
	cause    string           // why no child is serving, for the owed errors' messages (cause.go)
	spawnErr *proc.SpawnError // the last start that failed, for their data
	causeMu  sync.Mutex       // guards cause and spawnErr: the client relay answers with them
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
	}
	s.cur.Store(&child{}) // generation 0: no start yet
	s.client.OnTerminate = func() { s.emit(phases.Transport, phases.PartialLineTerminated) }
	// A dead child's torn last line: dropped when the shim wrote after it,
	// delivered when the session ended with it.
	s.client.OnTail = func(l *jsonrpc.Line) { s.cfg.Recorder.Line(phases.FromServer, l) }
	// The client relay lives as long as the client's stdin: it exits at EOF or
	// when the process ends (a blocking read of stdin cannot be interrupted).
	go s.relayClient()
	status := s.loop(ctx)
	s.client.Flush()
	return status
}

// emit records an event of the current run.
func (s *Supervisor) emit(p phases.Phase, event string, fields ...ledger.Field) {
	c := s.cur.Load()
	s.cfg.Recorder.Emit(ledger.Record{Time: time.Now(), Run: c.run, PID: c.pid(), Phase: p, Event: event, Fields: fields})
}

// say tells the person reading the client's log, in order with the events.
func (s *Supervisor) say(format string, args ...any) {
	// The name, paths, errors and stderr lines in it came from outside the shim.
	s.cfg.Recorder.Say(termsafe.String(fmt.Sprintf("mcpshim %s: "+format, append([]any{s.cfg.Name}, args...)...)) + "\n")
}

func (s *Supervisor) relayClient() {
	r := &jsonrpc.Relay{
		Src:        s.cfg.ClientIn,
		Dst:        s.toChild,
		MaxObserve: s.cfg.MaxObserve,
		Route:      s.routeClient,
		Keep:       func([]byte) bool { return s.cfg.CaptureFull },
		Ready:      s.sess.waitReady,
	}
	err := r.Run()
	s.events <- loopEvent{clientEOF: true, err: err}
}

func (s *Supervisor) routeClient(l *jsonrpc.Line) bool {
	if !l.Held && s.childIn.takeCut() {
		// Its start reached a child that is gone, or nothing: no child has it whole.
		each(&l.Msg, func(m *mcp.Msg) {
			if m.Kind == mcp.Request {
				s.answer(newPending(m), "restarted while the request was being sent")
			}
		})
		return false
	}
	forward, r := s.sess.fromClient(l)
	for _, p := range r.answer {
		s.answer(p, notRunning)
	}
	if r.dropped {
		s.emit(phases.Supervision, phases.MessageRejected, ledger.F("method", l.Msg.Method), ledger.F("kind", l.Msg.Kind.String()),
			ledger.F("bytes", l.Size), ledger.F("reason", "no server running"))
	}
	for _, id := range r.late {
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F("request_id", id))
	}
	if forward {
		each(&l.Msg, s.mem.noteClient)
		s.record(phases.FromClient, l)
	}
	return forward
}

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
	s.status = exitConfig
	s.events <- loopEvent{lockBroken: true}
	return !l.Held
}

// exitConfig is EX_CONFIG: a wiring problem a person must fix.
const exitConfig = 78

// record hands a line to the recorder as Route lets it through, just before
// its last bytes are written (a non-blocking enqueue): recorded after the
// write, a fast answer could reach the ledger before its request.
func (s *Supervisor) record(dir phases.Dir, l *jsonrpc.Line) {
	s.cfg.Recorder.Line(dir, l)
}

// routeServer is the Route of c's stdout relay.
func (s *Supervisor) routeServer(c *child, l *jsonrpc.Line) bool {
	if l.Msg.IsResponse() && mcp.IsOwnID(l.Msg.ID) {
		c.noteHandshake(l) // the replayed handshake, or any answer of a modern child
		select {
		case c.own <- append([]byte(nil), l.Data...):
		default:
		}
		if l.Held {
			return false
		}
		// Over a MiB, its start is already with the client, under an id it never
		// used (clients ignore those): say so rather than pretend.
		s.emit(phases.Transport, phases.OwnAnswerForwarded, ledger.F("request_id", string(l.Msg.RawID)), ledger.F("bytes", l.Size))
		return true
	}
	answered, late := s.sess.fromServer(&l.Msg)
	if late && l.Held {
		// The shim answered this request itself when the child died: one answer only.
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F("request_id", string(l.Msg.RawID)), ledger.F("direction", "server"))
		return false
	}
	if l.Msg.Kind == mcp.Notification && l.Msg.Method == "notifications/cancelled" {
		id, _ := mcp.ParseID(mcp.Member(l.Msg.Params, "requestId"))
		s.mem.endListen(id) // the server ended the client's subscription stream
	}
	c.noteHandshake(l)
	if l.Held && s.sess.reacknowledged(&l.Msg) {
		l.Forwarded = false
		s.record(phases.FromServer, l)
		return false
	}
	if s.cfg.DivertNoise && l.Msg.Kind == mcp.Noise && l.Held {
		l.Forwarded = false
		s.record(phases.FromServer, l)
		return false
	}
	s.record(phases.FromServer, l)
	if answered == "tools/list" && s.cfg.CheckTools != nil && !s.checkLock(c, l) {
		return false
	}
	return true
}

// answer writes the error the shim owes the client for request p.
func (s *Supervisor) answer(p pendingCall, why string) {
	msg := s.owedMessage(why)
	data := map[string]any{"run": s.cur.Load().run, "method": p.method}
	if p.tool != "" {
		data["tool"] = p.tool
	}
	s.writeOwed(p, msg, s.causeData(data))
}

// writeOwedError writes one error response of the shim's own to the client.
func (s *Supervisor) writeOwedError(id []byte, msg string, data map[string]any) error {
	terminated, err := s.client.WriteMessage(errorResponse(id, msg, data))
	if terminated {
		s.emit(phases.Transport, phases.PartialLineTerminated)
	}
	return err
}

func (s *Supervisor) writeOwed(p pendingCall, msg string, data map[string]any) {
	if s.writeOwedError(p.id, msg, data) != nil {
		return
	}
	if id, ok := mcp.ParseID(p.id); ok {
		s.mem.endListen(id) // an answered subscription stream is over
	}
	fields := []ledger.Field{ledger.F("request_id", string(p.id)), ledger.F("method", p.method), ledger.F("direction", "client")}
	if p.tool != "" {
		fields = append(fields, ledger.F("tool", p.tool))
	}
	s.emit(phases.Interruption, phases.PendingFailed, append(fields, ledger.F("message", msg))...)
}

func (s *Supervisor) loop(ctx context.Context) int {
	defer func() {
		for _, p := range s.sess.close() {
			s.answer(p, notRunning)
		}
	}()
	for {
		status, exit, err := s.runChild(ctx)
		if err != nil {
			// The child never started: nothing time can fix (seed 000).
			var se *proc.SpawnError
			errors.As(err, &se)
			s.giveUp(Decision{Reason: "spawn failed: " + err.Error(), GiveUp: true}, exit)
			return se.ExitStatus()
		}
		if s.status != 0 {
			return s.status
		}
		if s.stopping {
			return status
		}
		d := s.restart.Next(time.Now(), exit)
		if !d.Restart {
			if d.GiveUp {
				s.giveUp(d, exit)
			}
			return status
		}
		s.emit(phases.Supervision, phases.RestartScheduled, ledger.F("attempt", d.Attempt), ledger.F("delay_ms", d.Delay),
			ledger.F("reason", d.Reason), ledger.F("previous_run", s.cur.Load().run))
		s.say("restarting in %v (attempt %d: %s)", d.Delay, d.Attempt, d.Reason)
		if !s.sleep(ctx, d.Delay) {
			return status
		}
	}
}

// sleep waits out a restart delay; it returns false when the session ended meanwhile.
func (s *Supervisor) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case ev := <-s.events:
			if ev.clientEOF || ev.clientGone {
				s.clientLeft(ev)
				return false
			}
		case sig := <-s.cfg.Signals:
			s.emit(phases.Interruption, phases.SignalReceived, ledger.F("signal", sigName(sig)), ledger.F("forwarded", false))
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				return false // told to stop: no restart
			}
		case <-ctx.Done():
			return false
		}
	}
}

func (s *Supervisor) giveUp(d Decision, e Exit) {
	fields := []ledger.Field{ledger.F("attempts", d.Attempt), ledger.F("reason", d.Reason), ledger.F("exit_code", e.Code)}
	if e.Signal != "" {
		fields = append(fields, ledger.F("signal", e.Signal))
	}
	tail := s.cur.Load().tail
	if tail != nil {
		fields = append(fields, ledger.F("stderr_tail", tail.Lines()))
	}
	s.emit(phases.Supervision, phases.RestartsExhausted, fields...)
	last := ""
	if tail != nil {
		last, _ = tail.Cause()
	}
	if last != "" {
		s.say("giving up: %s; its stderr said: %s", d.Reason, last)
	} else {
		s.say("giving up: %s", d.Reason)
	}
}

func (s *Supervisor) clientLeft(ev loopEvent) {
	reason := "stdin_eof"
	if ev.clientGone {
		reason = "stdout_closed"
	} else if ev.err != nil {
		reason = "stdin_error: " + ev.err.Error()
	}
	s.emit(phases.Interruption, phases.ClientDisconnected, ledger.F("reason", reason))
	s.stopping = true
}

// runChild starts one generation and supervises it until it exits.
func (s *Supervisor) runChild(ctx context.Context) (status int, exit Exit, err error) {
	prev := s.cur.Load()
	gen := prev.gen + 1
	now := time.Now()
	run := ledger.NewID("run", now)
	// Published before the process runs: spawn_requested, a failed start and
	// the errors owed meanwhile name the new run.
	s.cur.Store(&child{gen: gen, run: run, tail: prev.tail})
	spec := s.cfg.Spec
	fields := []ledger.Field{
		ledger.F("command", redact.String(spec.Path)), ledger.F("argv", redact.Args(spec.Args)),
		ledger.F("cwd", cwd(spec.Dir)), ledger.F("env_names", envNames(spec.Env)), ledger.F("path", redact.String(proc.EnvValue(spec.Env, "PATH"))),
		ledger.F("generation", gen), ledger.F("egress", egressWord(s.cfg.Witnessed)),
	}
	if prev.run != "" {
		fields = append(fields, ledger.F("previous_run", prev.run))
	}
	s.emit(phases.Launch, phases.SpawnRequested, fields...)
	exit = Exit{Started: now, EverHandshook: s.everHS}
	p, err := proc.Start(spec)
	if err != nil {
		var se *proc.SpawnError
		if !errors.As(err, &se) {
			se = proc.Classify(err, spec.Dir)
			err = se
		}
		s.emit(phases.Launch, phases.SpawnFailed, ledger.F("error_class", se.Class), ledger.F("error", se.Error()), ledger.F("hint", se.Hint))
		s.say("cannot start %s: %v (%s)", spec.Path, se.Err, se.Hint)
		s.causeMu.Lock()
		s.spawnErr, s.cause = se, "cannot start: "+proc.SpawnCause(se)
		s.causeMu.Unlock()
		exit.SpawnFailed = true
		return se.ExitStatus(), exit, err
	}
	c := &child{gen: gen, run: run, p: p, tail: &proc.Tail{}, runner: proc.PackageRunner(spec.Path, spec.Args), own: make(chan []byte, 16)}
	if len(s.cfg.Guard) > 0 {
		grace := time.Duration(0)
		if c.runner {
			grace = InstallGrace
		}
		if c.guard, err = proc.StartGuard(s.cfg.Guard, p.Pid, grace); err != nil {
			s.say("no guard process (%v): grandchildren may outlive a killed shim", err)
		}
	}
	s.cur.Store(c)
	s.sess.spawned()
	s.causeMu.Lock()
	s.spawnErr, s.cause = nil, ""
	s.causeMu.Unlock()
	s.emit(phases.Launch, phases.Spawned, ledger.F("pid", p.Pid), ledger.F("pgid", p.Pid), ledger.F("generation", gen))
	stdoutDone := make(chan error, 1)
	stdout := &jsonrpc.Relay{
		Src:        p.Stdout,
		Dst:        s.client,
		MaxObserve: s.cfg.MaxObserve,
		Route:      func(l *jsonrpc.Line) bool { return s.routeServer(c, l) },
		Observe:    s.observeServer,
		ParkTorn:   true,
		Keep:       s.keepWhole,
	}
	// The child's stdout: relayed until EOF, or until drain closes the pipe.
	go func() { stdoutDone <- stdout.Run() }()
	stderrDone := make(chan struct{})
	pid := p.Pid
	go func() {
		defer close(stderrDone)
		proc.ForwardStderr(p.Stderr, s.cfg.Stderr, c.tail, func(line []byte) {
			if s.cfg.OnServerStderr != nil {
				s.cfg.OnServerStderr(run, pid, line)
			}
		})
	}()

	if gen > 1 {
		if err := s.replay(ctx, c); err != nil {
			s.say("the restarted server did not take the session back: %v", err)
			s.emit(phases.Supervision, phases.ReplayFailed, ledger.F("error", err.Error()))
			_ = p.Signal(syscall.SIGKILL)
		}
	}
	s.childIn.set(p.Stdin)
	undelivered, late := s.sess.setUp(func(line []byte, open bool) error {
		if open {
			return s.toChild.WriteUnterminated(line)
		}
		_, err := s.toChild.WriteMessage(line)
		return err
	}, s.observeDelivered)
	for _, pc := range undelivered {
		s.answer(pc, "could not be reached")
	}
	for _, id := range late {
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F("request_id", id))
	}

	requested, stdoutOpen := s.supervise(ctx, c, stdoutDone)
	s.childIn.set(nil)
	code, sig := p.Status()
	status = p.ShellStatus()
	how := fmt.Sprintf("exited with code %d", code)
	if sig != "" {
		how = "was killed by " + sig
	}
	var withdrawn []pendingCall
	// cause picks the stderr line that states the error, from what was read so far.
	cause := func() string {
		line, stated := c.tail.Cause()
		c := proc.ExitCause(how, line, stated, requested)
		s.causeMu.Lock()
		s.cause = c
		s.causeMu.Unlock()
		return strings.TrimPrefix(strings.TrimPrefix(c, how), ": ")
	}
	owe := func() {
		said := cause()
		var unanswered []pendingCall
		unanswered, withdrawn = s.sess.down()
		for _, pc := range unanswered {
			msg := fmt.Sprintf("mcpshim: server %s %s before answering", s.cfg.Name, how)
			if said != "" {
				msg += ": " + said
			}
			s.writeOwed(pc, msg, s.causeData(map[string]any{"run": run, "exit_code": code, "signal": sig, "method": pc.method}))
		}
	}
	// All pipe reads finish before the run is declared over.
	s.drain(p, stdoutOpen, stderrDone, owe)
	if c.guard != nil {
		c.guard.Close()
	}
	said := cause() // every stderr line is in now
	s.withdraw(withdrawn, how)
	exitFields := []ledger.Field{ledger.F("exit_code", code), ledger.F("duration_ms", time.Since(p.Started)),
		ledger.F("stderr_tail", c.tail.Lines()), ledger.F("requested_by_shim", requested)}
	if said != "" {
		exitFields = append(exitFields, ledger.F("stderr_cause", said))
	}
	if sig != "" {
		exitFields = append(exitFields, ledger.F("signal", sig))
	}
	s.emit(phases.Launch, phases.Exited, exitFields...)
	if !requested && (code != 0 || sig != "") {
		if said != "" {
			s.say("server %s; its stderr said: %s", how, said)
		} else {
			s.say("server %s", how)
		}
	}
	exit.Code, exit.Signal, exit.Ended = code, sig, time.Now()
	exit.HandshakeAt = c.handshakeAt()
	if !exit.HandshakeAt.IsZero() {
		s.everHS = true
	}
	return status, exit, nil
}

// drainGrace is how long the child's pipes may stay open after it exited
// before whoever holds them is killed with the group; drainMax bounds the
// drain of a child whose last line is still being written to a slow client.
const (
	drainGrace = 400 * time.Millisecond
	drainMax   = time.Minute
)

// keepWhole says whether a long line from the server is observed up to
// --max-observe rather than its first MiB: an answer to tools/list, whose
// tools are digested, and every line with --capture full. Anything else keeps
// its id, method and size; a 64 MiB tool result costs no 16 MiB buffer.
func (s *Supervisor) keepWhole(prefix []byte) bool {
	if s.cfg.CaptureFull {
		return true
	}
	m := mcp.Peek(prefix)
	if mcp.IsOwnID(m.ID) {
		return true // the shim's own tools/list after a restart
	}
	if !m.ID.IsZero() {
		return s.sess.pendingMethod(m.ID) == "tools/list"
	}
	// Some serializers (the TypeScript SDK) write the id last: judge by the result's shape.
	return m.Cut == "result" && mcp.FirstKey(m.CutValue) == "tools"
}

// observeDelivered records a held client line when it reaches the child.
func (s *Supervisor) observeDelivered(line []byte) {
	now := time.Now()
	l := jsonrpc.Line{Data: line, Size: int64(len(line) + 1), Forwarded: true, Msg: mcp.Peek(line), End: now}
	each(&l.Msg, s.mem.noteClient)
	s.cfg.Recorder.Line(phases.FromClient, &l)
}

func (s *Supervisor) observeServer(l *jsonrpc.Line) {
	if l.Unterminated && !l.Routed {
		// Route did not see how the stream ended: record it here.
		s.cfg.Recorder.Line(phases.FromServer, l)
		return
	}
	if s.cfg.DivertNoise && !l.Forwarded {
		s.cfg.Stderr.Write(append(append([]byte(nil), l.Data...), '\n'))
	}
	if !l.Forwarded && l.Msg.IsResponse() {
		return // the answer to one of the shim's own requests
	}
	s.mem.noteServer(l)
}

// egressWord says whether outbound connections of the run are witnessed: a
// run that is not says so rather than claiming nothing happened.
func egressWord(witnessed bool) string {
	if witnessed {
		return "witnessed"
	}
	return "unwitnessed"
}

func cwd(dir string) string {
	if dir != "" {
		return dir
	}
	wd, _ := os.Getwd()
	return wd
}

func envNames(env []string) []string {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		if i := strings.IndexByte(kv, '='); i > 0 {
			names = append(names, kv[:i])
		}
	}
	sort.Strings(names)
	return names
}
