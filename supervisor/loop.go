package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// loop runs generations until the session ends for good and returns the
// shim's exit status. It runs on Run's goroutine.
func (s *Supervisor) loop(ctx context.Context) int {
	defer func() {
		for _, p := range s.sess.close() {
			s.answer(p, notRunning)
		}
	}()
	for {
		status, exit, err := s.runChild(ctx)
		if err != nil {
			// The child never started: a restart would fail the same way.
			var se *proc.SpawnError
			errors.As(err, &se)
			s.giveUp(Decision{Reason: "spawn failed: " + err.Error(), GiveUp: true}, exit)
			return se.ExitStatus()
		}
		if s.lockBroken.Load() {
			return lock.ExitConfig
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
		s.emit(phases.Supervision, phases.RestartScheduled, ledger.F("attempt", d.Attempt), ledger.F(phases.FieldDelayMS, d.Delay),
			ledger.F(phases.FieldReason, d.Reason), ledger.F(phases.FieldPreviousRun, s.cur.Load().run))
		s.say("restarting in %v (attempt %d: %s)", d.Delay, d.Attempt, d.Reason)
		if !s.wait(ctx, d.Delay, nil) {
			return status
		}
	}
}

// wait waits d, or until done is closed, while no child runs; it returns
// false when the session ended meanwhile: the client left, or the shim was
// told to stop.
func (s *Supervisor) wait(ctx context.Context, d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-done:
			return true
		case ev := <-s.events:
			if ev.clientEOF || ev.clientGone {
				s.clientLeft(ev)
				return false
			}
		case sig := <-s.cfg.Signals:
			s.emit(phases.Interruption, phases.SignalReceived, ledger.F(phases.FieldSignal, sigName(sig)), ledger.F(phases.FieldForwarded, false))
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				s.stopping = true // told to stop: no restart
				return false
			}
		case <-ctx.Done():
			s.stopping = true
			return false
		}
	}
}

func (s *Supervisor) giveUp(d Decision, e Exit) {
	fields := []ledger.Field{ledger.F(phases.FieldAttempts, d.Attempt), ledger.F(phases.FieldReason, d.Reason), ledger.F(phases.FieldExitCode, e.Code)}
	if e.Signal != "" {
		fields = append(fields, ledger.F(phases.FieldSignal, e.Signal))
	}
	tail := s.cur.Load().tail
	if tail != nil {
		fields = append(fields, ledger.F(phases.FieldStderrTail, tail.Lines()))
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
	s.emit(phases.Interruption, phases.ClientDisconnected, ledger.F(phases.FieldReason, reason))
	s.stopping = true
}

// runChild starts one generation and supervises it until it exits.
func (s *Supervisor) runChild(ctx context.Context) (status int, exit Exit, err error) {
	prev := s.cur.Load()
	gen := prev.gen + 1
	spec := s.cfg.Spec
	l := s.cfg.First // the first start, when the caller made it (Spawn)
	s.cfg.First = nil
	if l == nil {
		l = newLaunch(spec)
	}
	run := l.run
	// Published before the process runs: spawn_requested, a failed start and
	// the errors owed meanwhile name the new run.
	s.cur.Store(&child{gen: gen, run: run, tail: prev.tail})
	fields := []ledger.Field{
		ledger.F("command", redact.String(spec.Path)), ledger.F("argv", redact.Args(spec.Args)),
		ledger.F("cwd", cwd(spec.Dir)), ledger.F("env_names", envNames(spec.Env)), ledger.F("path", redact.String(proc.EnvValue(spec.Env, "PATH"))),
		ledger.F(phases.FieldGeneration, gen), ledger.F(phases.FieldEgress, egressWord(s.cfg.Witnessed)),
	}
	if prev.run != "" {
		fields = append(fields, ledger.F(phases.FieldPreviousRun, prev.run))
	}
	s.emitAt(l.requested, phases.Launch, phases.SpawnRequested, fields...)
	exit = Exit{Started: l.requested, EverHandshook: s.everHS}
	if l.p == nil && l.err == nil {
		l.start(spec, s.cfg.Guard)
	}
	if se := l.err; se != nil {
		s.emitAt(l.failed, phases.Launch, phases.SpawnFailed, ledger.F(phases.FieldErrorClass, se.Class), ledger.F(phases.FieldError, se.Error()), ledger.F(phases.FieldHint, se.Hint))
		s.say("cannot start %s: %v (%s)", spec.Path, se.Err, se.Hint)
		s.causeMu.Lock()
		s.spawnErr, s.cause, s.death = se, "cannot start: "+proc.SpawnCause(se), nil
		s.causeMu.Unlock()
		exit.SpawnFailed, exit.Code = true, se.ExitStatus()
		return se.ExitStatus(), exit, se
	}
	p := l.p
	c := &child{gen: gen, run: run, p: p, tail: &proc.Tail{}, runner: l.runner, start: l, own: make(chan []byte, 16)}
	s.cur.Store(c)
	s.sess.spawned()
	s.causeMu.Lock()
	s.spawnErr, s.cause, s.death = nil, "", nil
	s.causeMu.Unlock()
	s.emitAt(p.Started, phases.Launch, phases.Spawned, ledger.F("pid", p.Pid), ledger.F("pgid", p.Pid), ledger.F(phases.FieldGeneration, gen))
	if hint := noStdin(c); gen == 1 && hint != "" {
		s.say("%s", hint)
	}
	oom := proc.WatchOOM(p.Pid) // read while it lives: a kill from outside may be the OOM killer's
	stdoutDone := make(chan error, 1)
	stdout := &jsonrpc.Relay{
		Src:        p.Stdout,
		Dst:        s.client,
		MaxObserve: s.cfg.MaxObserve,
		Route:      func(l *jsonrpc.Line) bool { return s.routeServer(c, l) },
		Observe:    s.observeServer,
		ParkTorn:   true,
		Keep:       s.keepWhole,
		Kept:       s.kept,
	}
	// The child's stdout relay: returns at EOF (the child and whatever
	// inherited the pipe are gone), when drain closes the pipe, or when
	// writing to the client fails. It reads nothing before the guard runs:
	// a shim killed once the client has an answer leaves no orphan.
	go func() {
		if err := c.guarded(); err != nil {
			s.say("no guard process (%v): grandchildren may outlive a killed shim", err)
		}
		stdoutDone <- stdout.Run()
	}()
	stderrDone := make(chan struct{})
	pid := p.Pid
	// The child's stderr: forwarded until EOF, or until drain closes the pipe.
	go func() {
		defer close(stderrDone)
		proc.ForwardStderr(p.Stderr, s.cfg.Stderr, c.tail, func(line []byte) {
			if s.cfg.OnServerStderr != nil {
				s.cfg.OnServerStderr(run, pid, line)
			}
		})
	}()

	var killed string // why the shim killed it before supervising it
	if gen > 1 {
		if err := s.replay(ctx, c); err != nil {
			s.say("the restarted server did not take the session back: %v", err)
			fields := []ledger.Field{ledger.F(phases.FieldError, err.Error())}
			var re *replayError
			if errors.As(err, &re) {
				fields = append(fields, ledger.F(phases.FieldMethod, re.method))
				if re.timeout > 0 {
					fields = append(fields, ledger.F(phases.FieldTimeoutMS, re.timeout))
				}
			}
			s.emit(phases.Supervision, phases.ReplayFailed, fields...)
			select {
			case <-p.Exited(): // it died by itself: its end is its own
			default:
				// The shim's own kill: recorded as one, so that the verdict
				// does not read it as a signal from outside.
				s.emit(phases.Interruption, phases.KillRequested, ledger.F(phases.FieldSignal, proc.KillName),
					ledger.F(phases.FieldReason, "the restarted server did not take the session back: "+err.Error()))
				_ = p.Signal(syscall.SIGKILL)
				killed = "after it did not take the session back"
			}
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
		s.emit(phases.Supervision, phases.LateResponseDropped, ledger.F(phases.FieldRequestID, id))
	}

	stopped, stdoutOpen := s.supervise(ctx, c, stdoutDone, killed)
	requested := stopped != ""
	s.childIn.set(nil)
	code, sig := p.Status()
	status = p.ShellStatus()
	how := exitWords(code, sig, stopped)
	var withdrawn []pendingCall
	hint := noStdinSuffix(c)
	// cause picks the stderr line that states the error, from what was read so far.
	cause := func() string {
		line, stated := c.tail.Cause()
		c := proc.ExitCause(how, line, stated, requested)
		said := strings.TrimPrefix(strings.TrimPrefix(c, how), ": ")
		d := &death{message: diedMessage(s.cfg.Name, how, said, requested) + hint, code: code, signal: sig}
		s.causeMu.Lock()
		s.cause, s.death = c, d
		s.causeMu.Unlock()
		return said
	}
	owe := func() {
		cause()
		var unanswered []pendingCall
		unanswered, withdrawn = s.sess.down()
		for _, pc := range unanswered {
			s.answer(pc, notRunning)
		}
	}
	// All pipe reads finish before the run is declared over.
	s.drain(p, stdoutOpen, stderrDone, owe)
	ctrFields := s.stopContainer(c, sig) // before the guard's release: it stops the container should the shim die meanwhile
	c.releaseGuard()
	p.Release()
	said := cause() // every stderr line is in now
	s.withdraw(withdrawn, how)
	exitFields := []ledger.Field{ledger.F(phases.FieldExitCode, code), ledger.F(phases.FieldDurationMS, time.Since(p.Started)),
		ledger.F(phases.FieldStderrTail, c.tail.Lines()), ledger.F(phases.FieldRequestedByShim, requested)}
	if said != "" {
		exitFields = append(exitFields, ledger.F(phases.FieldStderrCause, said))
	}
	if sig != "" {
		exitFields = append(exitFields, ledger.F(phases.FieldSignal, sig))
	}
	exitFields = append(exitFields, ctrFields...)
	if sig != "" && !requested {
		// A signal the shim did not send: say whether the OOM killer's
		// count moved, or why it cannot be read.
		if n, err := oom.Kills(); err != nil {
			exitFields = append(exitFields, ledger.F(phases.FieldOOMUnreadable, err.Error()))
		} else {
			exitFields = append(exitFields, ledger.F(phases.FieldOOMKills, n), ledger.F(phases.FieldOOMFile, oom.File))
		}
	}
	s.emit(phases.Launch, phases.Exited, exitFields...) // the recorder's teller says the run's verdict after it
	exit.Code, exit.Signal, exit.Ended = code, sig, time.Now()
	exit.HandshakeAt = c.handshakeAt()
	if !exit.HandshakeAt.IsZero() {
		s.everHS = true
	}
	return status, exit, nil
}

// exitWords says how a child ended, and who stopped it when the shim did
// ("stopped by mcpshim after the client left: killed by SIGTERM"): a server
// that went at the shim's word did not fail on its own.
func exitWords(code int, sig, stopped string) string {
	how := fmt.Sprintf("exited with code %d", code)
	if sig != "" {
		how = "killed by " + sig
	}
	if stopped != "" {
		return "stopped by mcpshim " + stopped + ": " + how
	}
	if sig != "" {
		how = "was " + how
	}
	return how
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
