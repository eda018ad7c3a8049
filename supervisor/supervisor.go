package supervisor

import (
	"bytes"
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
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Config is everything one shim session needs.
type Config struct {
	Name  string   // the server's label
	Spec  Spec     // what to run
	Guard []string // argv of the guard process (see startGuard); nil for none

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

// Supervisor runs the child for one client session.
type Supervisor struct {
	cfg      Config
	sess     *session
	client   *jsonrpc.Wire
	childIn  *switchWriter
	toChild  *jsonrpc.Wire // the client's lines and the held ones, one whole line at a time
	events   chan loopEvent
	stopping bool                     // no more restarts: the client left or the shim was told to stop
	runID    atomic.Pointer[runIdent] // the run being supervised; read from the relay goroutines
	restart  *Restarter
	gen      int
	tail     *Tail
	everHS   bool
	mem      memory
	own      chan []byte // answers to the shim's own requests, swallowed from the child's stdout
	ownSeq   int
	current  io.Writer         // the current child's stdin, for the shim's own requests
	pages    []json.RawMessage // tools of the pages of the tools/list being answered (lock check)
	status   int               // when set, the shim's exit status whatever the child's
	hsAt     atomic.Int64      // unix ns of the current run's first answer; 0 before it (read on the relay's path)
	cause    string            // why no child is serving, for the owed errors' messages (cause.go)
	spawnErr *SpawnError       // the last start that failed, for their data
	causeMu  sync.Mutex        // guards cause, spawnErr and tail: the client relay answers with them
	runner   bool              // the current child is a package runner (runner.go)
	guard    atomic.Pointer[os.File]
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
		own:     make(chan []byte, 16),
	}
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

// runIdent names the current child process.
type runIdent struct {
	run string
	pid int
}

func (s *Supervisor) ident() runIdent {
	if id := s.runID.Load(); id != nil {
		return *id
	}
	return runIdent{}
}

func (s *Supervisor) emit(p phases.Phase, event string, fields ...phases.Field) {
	id := s.ident()
	s.cfg.Recorder.Emit(phases.Record{Time: time.Now(), Run: id.run, PID: id.pid, Phase: p, Event: event, Fields: fields})
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
		s.emit(phases.Supervision, phases.MessageRejected, phases.F("method", l.Msg.Method), phases.F("kind", l.Msg.Kind.String()),
			phases.F("bytes", l.Size), phases.F("reason", "no server running"))
	}
	for _, id := range r.late {
		s.emit(phases.Supervision, phases.LateResponseDropped, phases.F("request_id", id))
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
func (s *Supervisor) checkLock(l *jsonrpc.Line) bool {
	page, err := mcp.ParseToolsPage(l.Msg.Result)
	if l.Truncated || l.Msg.Kind != mcp.Response || err != nil {
		s.pages = nil
		return true
	}
	s.pages = append(s.pages, page.Tools...)
	if page.More {
		return true
	}
	missing := s.cfg.CheckTools(s.pages)
	s.pages = nil
	if len(missing) == 0 {
		return true
	}
	mode := "warn"
	if s.cfg.EnforceLock {
		mode = "enforce"
	}
	s.emit(phases.Discovery, phases.ToolsMissing, phases.F("missing", missing), phases.F("mode", mode))
	s.say("tool surface lock: %d locked tool(s) missing: %s", len(missing), strings.Join(missing, ", "))
	if !s.cfg.EnforceLock {
		return true
	}
	// Over the hold, the list is already on the wire: it stays the answer,
	// but the server is stopped all the same.
	if l.Held {
		msg := fmt.Sprintf("mcpshim: server %s lacks locked tools: %s", s.cfg.Name, strings.Join(missing, ", "))
		s.writeOwedError(l.Msg.RawID, msg, map[string]any{"run": s.ident().run, "missing": missing})
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

func (s *Supervisor) routeServer(l *jsonrpc.Line) bool {
	if l.Msg.IsResponse() && mcp.IsOwnID(l.Msg.ID) {
		s.noteHandshake(l) // the replayed handshake, or any answer of a modern child
		select {
		case s.own <- append([]byte(nil), l.Data...):
		default:
		}
		if l.Held {
			return false
		}
		// Over a MiB, its start is already with the client, under an id it never
		// used (clients ignore those): say so rather than pretend.
		s.emit(phases.Transport, phases.OwnAnswerForwarded, phases.F("request_id", string(l.Msg.RawID)), phases.F("bytes", l.Size))
		return true
	}
	answered, late := s.sess.fromServer(&l.Msg)
	if late && l.Held {
		// The shim answered this request itself when the child died: one answer only.
		s.emit(phases.Supervision, phases.LateResponseDropped, phases.F("request_id", string(l.Msg.RawID)), phases.F("direction", "server"))
		return false
	}
	if l.Msg.Kind == mcp.Notification && l.Msg.Method == "notifications/cancelled" {
		id, _ := mcp.ParseID(mcp.Member(l.Msg.Params, "requestId"))
		s.mem.endListen(id) // the server ended the client's subscription stream
	}
	s.noteHandshake(l)
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
	if answered == "tools/list" && s.cfg.CheckTools != nil && !s.checkLock(l) {
		return false
	}
	return true
}

// answer writes the error the shim owes the client for request p.
func (s *Supervisor) answer(p pendingCall, why string) {
	msg := s.owedMessage(why)
	data := map[string]any{"run": s.ident().run, "method": p.method}
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
	fields := []phases.Field{phases.F("request_id", string(p.id)), phases.F("method", p.method), phases.F("direction", "client")}
	if p.tool != "" {
		fields = append(fields, phases.F("tool", p.tool))
	}
	s.emit(phases.Interruption, phases.PendingFailed, append(fields, phases.F("message", msg))...)
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
			var se *SpawnError
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
		s.emit(phases.Supervision, phases.RestartScheduled, phases.F("attempt", d.Attempt), phases.F("delay_ms", d.Delay),
			phases.F("reason", d.Reason), phases.F("previous_run", s.ident().run))
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
			s.emit(phases.Interruption, phases.SignalReceived, phases.F("signal", sigName(sig)), phases.F("forwarded", false))
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				return false // told to stop: no restart
			}
		case <-ctx.Done():
			return false
		}
	}
}

func (s *Supervisor) giveUp(d Decision, e Exit) {
	fields := []phases.Field{phases.F("attempts", d.Attempt), phases.F("reason", d.Reason), phases.F("exit_code", e.Code)}
	if e.Signal != "" {
		fields = append(fields, phases.F("signal", e.Signal))
	}
	if s.tail != nil {
		fields = append(fields, phases.F("stderr_tail", s.tail.Lines()))
	}
	s.emit(phases.Supervision, phases.RestartsExhausted, fields...)
	last := ""
	if s.tail != nil {
		last, _ = s.tail.Cause()
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
	s.emit(phases.Interruption, phases.ClientDisconnected, phases.F("reason", reason))
	s.stopping = true
}

// runChild starts one generation and supervises it until it exits.
func (s *Supervisor) runChild(ctx context.Context) (status int, exit Exit, err error) {
	s.gen++
	prev := s.ident().run
	now := time.Now()
	run := phases.NewID("run", now)
	s.runID.Store(&runIdent{run: run})
	spec := s.cfg.Spec
	fields := []phases.Field{
		phases.F("command", phases.Redact(spec.Path)), phases.F("argv", phases.RedactArgs(spec.Args)),
		phases.F("cwd", cwd(spec.Dir)), phases.F("env_names", envNames(spec.Env)), phases.F("path", phases.Redact(envValue(spec.Env, "PATH"))),
		phases.F("generation", s.gen), phases.F("egress", egressWord(s.cfg.Witnessed)),
	}
	if prev != "" {
		fields = append(fields, phases.F("previous_run", prev))
	}
	s.emit(phases.Launch, phases.SpawnRequested, fields...)
	exit = Exit{Started: now, EverHandshook: s.everHS}
	p, err := Start(spec)
	if err != nil {
		var se *SpawnError
		if !errors.As(err, &se) {
			se = classify(err, spec.Dir)
			err = se
		}
		s.emit(phases.Launch, phases.SpawnFailed, phases.F("error_class", se.Class), phases.F("error", se.Error()), phases.F("hint", se.Hint))
		s.say("cannot start %s: %v (%s)", spec.Path, se.Err, se.Hint)
		s.causeMu.Lock()
		s.spawnErr, s.cause = se, "cannot start: "+spawnCause(se)
		s.causeMu.Unlock()
		exit.SpawnFailed = true
		return se.ExitStatus(), exit, err
	}
	s.runID.Store(&runIdent{run: run, pid: p.Pid})
	s.sess.spawned()
	s.causeMu.Lock()
	s.spawnErr, s.cause = nil, ""
	s.causeMu.Unlock()
	s.runner = packageRunner(spec.Path, spec.Args)
	var guard *os.File
	if len(s.cfg.Guard) > 0 {
		grace := time.Duration(0)
		if s.runner {
			grace = InstallGrace
		}
		if guard, err = startGuard(s.cfg.Guard, p.Pid, grace); err != nil {
			s.say("no guard process (%v): grandchildren may outlive a killed shim", err)
		}
		s.guard.Store(guard)
	}
	s.emit(phases.Launch, phases.Spawned, phases.F("pid", p.Pid), phases.F("pgid", p.Pid), phases.F("generation", s.gen))
	s.hsAt.Store(0)
	s.causeMu.Lock()
	s.tail = &Tail{}
	s.causeMu.Unlock()
	stdoutDone := make(chan error, 1)
	stdout := &jsonrpc.Relay{
		Src:        p.Stdout,
		Dst:        s.client,
		MaxObserve: s.cfg.MaxObserve,
		Route:      s.routeServer,
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
		forwardStderr(p.Stderr, s.cfg.Stderr, s.tail, func(line []byte) {
			if s.cfg.OnServerStderr != nil {
				s.cfg.OnServerStderr(run, pid, line)
			}
		})
	}()

	s.current = p.Stdin
	if s.gen > 1 {
		if err := s.replay(ctx, p); err != nil {
			s.say("the restarted server did not take the session back: %v", err)
			s.emit(phases.Supervision, phases.ReplayFailed, phases.F("error", err.Error()))
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
		s.emit(phases.Supervision, phases.LateResponseDropped, phases.F("request_id", id))
	}

	requested, stdoutOpen := s.supervise(ctx, p, stdoutDone)
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
		line, stated := s.tail.Cause()
		c := exitCause(how, line, stated, requested)
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
	if guard != nil {
		s.guard.Store(nil)
		guard.Close()
	}
	said := cause() // every stderr line is in now
	s.withdraw(withdrawn, how)
	exitFields := []phases.Field{phases.F("exit_code", code), phases.F("duration_ms", time.Since(p.start)),
		phases.F("stderr_tail", s.tail.Lines()), phases.F("requested_by_shim", requested)}
	if said != "" {
		exitFields = append(exitFields, phases.F("stderr_cause", said))
	}
	if sig != "" {
		exitFields = append(exitFields, phases.F("signal", sig))
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
	exit.HandshakeAt = s.handshakeAt()
	if !exit.HandshakeAt.IsZero() {
		s.everHS = true
	}
	return status, exit, nil
}

// supervise waits for the child to exit, handling the client leaving and
// signals meanwhile. It reports whether the shim asked the child to stop.
func (s *Supervisor) supervise(ctx context.Context, p *Process, stdoutDone <-chan error) (requested bool, stdoutOpen <-chan error) {
	var ladder <-chan time.Time
	var waited time.Duration // the ladder's current wait
	step := 0                // 0: nothing asked, 1: stdin closed, 2: SIGTERM sent, 3: SIGKILL sent
	escalate := func(reason string) {
		switch step {
		case 0:
			step = 1
			p.Stdin.Close()
		case 1:
			step = 2
			s.emit(phases.Interruption, phases.KillRequested, phases.F("signal", "SIGTERM"), phases.F("reason", reason))
			_ = p.Signal(syscall.SIGTERM)
		case 2:
			step = 3
			s.emit(phases.Interruption, phases.KillRequested, phases.F("signal", "SIGKILL"), phases.F("reason", reason))
			_ = p.Signal(syscall.SIGKILL)
		default:
			return
		}
		waited = s.cfg.KillGrace
		if step == 1 {
			waited = s.closedGrace() // a runner still installing finishes first
		}
		ladder = time.After(waited)
		requested = true
	}
	for {
		select {
		case <-p.Exited():
			return requested, stdoutDone
		case ev := <-s.events:
			switch {
			case ev.lockBroken:
				s.stopping = true
				escalate("tool surface lock violated")
			case ev.clientEOF || ev.clientGone:
				s.clientLeft(ev)
				escalate("client disconnected")
			}
		case err := <-stdoutDone:
			if errors.Is(err, jsonrpc.ErrWrite) {
				s.clientLeft(loopEvent{clientGone: true})
				escalate("client disconnected")
			}
			// Stdout closed while the process lives: its exit is what counts.
			stdoutDone = nil
		case sig := <-s.cfg.Signals:
			name := sigName(sig)
			ss, ok := sig.(syscall.Signal)
			stop := ok && (ss == syscall.SIGINT || ss == syscall.SIGTERM)
			if ok && stop && s.installing() {
				// No signal is safe for an install (runner.go): let it finish.
				s.emit(phases.Interruption, phases.SignalReceived, phases.F("signal", name), phases.F("forwarded", false))
				s.stopping = true
				if step == 0 {
					escalate("shim stopping while the package runner may be installing")
				}
				continue
			}
			s.emit(phases.Interruption, phases.SignalReceived, phases.F("signal", name), phases.F("forwarded", true))
			if ok {
				_ = p.Signal(ss)
				if stop {
					s.stopping = true
					requested = true
					if step < 2 {
						step, waited = 2, s.cfg.KillGrace
						ladder = time.After(waited)
					}
				}
			}
		case <-ladder:
			escalate(fmt.Sprintf("still running %v after being asked to stop", waited))
		case <-ctx.Done():
			s.stopping = true
			if step == 0 {
				escalate("shim stopping")
			}
			ctx = context.Background()
		}
	}
}

// drainGrace is how long the child's pipes may stay open after it exited
// before whoever holds them is killed with the group; drainMax bounds the
// drain of a child whose last line is still being written to a slow client.
const (
	drainGrace = 400 * time.Millisecond
	drainMax   = time.Minute
)

// drain waits for the child's pipes to reach EOF, and calls owe once what
// the child wrote before its exit was relayed: at stdout's EOF, or one grace
// after the exit when something else (a grandchild) keeps the pipe open and
// moving — its output is not an answer the client should wait a minute for.
// A grandchild holding the pipes is killed with the group; one that escaped
// the group is cut off by closing our ends.
func (s *Supervisor) drain(p *Process, out <-chan error, errDone <-chan struct{}, owe func()) {
	start := time.Now()
	owed := false
	pay := func() {
		if !owed {
			owed = true
			owe()
		}
	}
	// wait waits d for both pipes to end, and longer while a line is being
	// written to the client: a slow client is not a pipe held open by a
	// grandchild, and the shim must not cut a line it is relaying.
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for out != nil || errDone != nil {
			select {
			case <-out:
				out = nil
				if errDone == nil {
					pay()
				}
			case <-errDone:
				// The cause is in the last stderr lines: the errors wait for
				// both pipes, or for the grace.
				errDone = nil
				if out == nil {
					pay()
				}
			case <-t.C:
				if s.client.Busy() && time.Since(start) < drainMax {
					t.Reset(d)
					continue
				}
				return false
			}
		}
		return true
	}
	if !wait(drainGrace) {
		_ = p.Signal(syscall.SIGKILL)
		if !s.client.Busy() {
			// Not while a line still goes out (a holder outside the group may
			// stream one without end): the errors follow once our ends are closed.
			pay()
		}
		if !wait(drainGrace) {
			p.Stdout.Close()
			p.Stderr.Close()
			wait(drainGrace)
		}
	}
	pay()
	p.Stdout.Close()
	p.Stderr.Close()
}

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

// noteHandshake remembers when the child completed a handshake, for the
// restart policy: any successful answer counts (initialize, server/discover,
// or a modern request).
func (s *Supervisor) noteHandshake(l *jsonrpc.Line) {
	if l.Msg.Kind == mcp.Response {
		s.handshook()
	}
}

// handshook marks the current run's first answer, to the client or to the
// shim's replay: a package runner's install is over.
func (s *Supervisor) handshook() {
	if s.hsAt.CompareAndSwap(0, time.Now().UnixNano()) && s.runner {
		s.tellGuard(guardReady)
	}
}

// handshakeAt is when the current run completed a handshake; zero before.
func (s *Supervisor) handshakeAt() time.Time {
	if ns := s.hsAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// egressWord says whether outbound connections of the run are witnessed: a
// run that is not says so rather than claiming nothing happened.
func egressWord(witnessed bool) string {
	if witnessed {
		return "witnessed"
	}
	return "unwitnessed"
}

func sigName(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return SignalName(ss)
	}
	return sig.String()
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

// switchWriter is the current child's stdin. It changes child only between
// lines: when the child changes (or dies) in the middle of a line, the rest of
// that line is dropped — its start went elsewhere — and the line is marked cut
// so that Route answers it. Writes to a dead child are dropped silently: the
// requests in them are answered when the child's exit is handled, never
// re-sent.
type switchWriter struct {
	mu   sync.Mutex
	w    io.Writer
	mid  bool // the last byte written (or dropped) did not end a line
	skip bool // drop bytes up to the end of the current line
	cut  bool // a line was cut since the last takeCut
}

func (sw *switchWriter) set(w io.Writer) {
	sw.mu.Lock()
	if sw.mid {
		sw.skip, sw.cut = true, true
	}
	sw.w = w
	sw.mu.Unlock()
}

// takeCut reports whether a line was cut since the last call.
func (sw *switchWriter) takeCut() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	cut := sw.cut
	sw.cut = false
	return cut
}

func (sw *switchWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	n := len(p)
	if sw.skip {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return n, nil
		}
		p, sw.skip, sw.mid = p[i+1:], false, false
	}
	if len(p) == 0 {
		return n, nil
	}
	sw.mid = p[len(p)-1] != '\n'
	if sw.w != nil {
		if _, err := sw.w.Write(p); err != nil {
			sw.w = nil // the child is gone; set installs the next one
			if sw.mid {
				sw.skip, sw.cut = true, true
			}
		}
	}
	return n, nil
}
