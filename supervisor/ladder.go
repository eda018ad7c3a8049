package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/proc"
)

// supervise waits for the child to exit, handling the client leaving and
// signals meanwhile. When the shim asked the child to stop, stopped says
// why, in words that follow "stopped by mcpshim" ("after the client left");
// it is empty when the child ended on its own. killed is why the shim
// already sent it SIGKILL ("" if it did not).
func (s *Supervisor) supervise(ctx context.Context, c *child, stdoutDone <-chan error, killed string) (stopped string, stdoutOpen <-chan error) {
	p := c.p
	var ladder <-chan time.Time
	var waited time.Duration // the ladder's current wait
	step := 0                // 0: nothing asked, 1: stdin closed, 2: SIGTERM sent, 3: SIGKILL sent
	if killed != "" {
		stopped, step = killed, 3
	}
	// stopFor keeps the first reason the shim had to stop the child.
	stopFor := func(why string) {
		if stopped == "" {
			stopped = why
		}
	}
	escalate := func(reason string) {
		switch step {
		case 0:
			step = 1
			p.Stdin.Close()
		case 1:
			step = 2
			if err := p.Signal(syscall.SIGTERM); err != nil {
				// No polite step to take (Windows without a console): end it.
				step = 3
				s.emit(phases.Interruption, phases.KillRequested, ledger.F(phases.FieldSignal, proc.KillName), ledger.F(phases.FieldReason, reason+"; "+err.Error()))
				_ = p.Signal(syscall.SIGKILL)
				break
			}
			s.emit(phases.Interruption, phases.KillRequested, ledger.F(phases.FieldSignal, proc.StopName), ledger.F(phases.FieldReason, reason))
		case 2:
			step = 3
			s.emit(phases.Interruption, phases.KillRequested, ledger.F(phases.FieldSignal, proc.KillName), ledger.F(phases.FieldReason, reason))
			_ = p.Signal(syscall.SIGKILL)
		default:
			return
		}
		waited = s.cfg.KillGrace
		if step == 1 {
			waited = s.closedGrace(c) // a runner still installing finishes first
		}
		ladder = time.After(waited)
	}
	for {
		select {
		case <-p.Exited():
			return stopped, stdoutDone
		case ev := <-s.events:
			switch {
			case ev.lockBroken:
				s.stopping = true
				stopFor("after its tools broke the lock")
				escalate("tool surface lock violated")
			case ev.clientEOF || ev.clientGone:
				s.clientLeft(ev)
				stopFor("after the client left")
				escalate("client disconnected")
			}
		case err := <-stdoutDone:
			if errors.Is(err, jsonrpc.ErrWrite) {
				s.clientLeft(loopEvent{clientGone: true})
				stopFor("after the client left")
				escalate("client disconnected")
			}
			// Stdout closed while the process lives: its exit is what counts.
			stdoutDone = nil
		case sig := <-s.cfg.Signals:
			name := sigName(sig)
			ss, ok := sig.(syscall.Signal)
			stop := ok && (ss == syscall.SIGINT || ss == syscall.SIGTERM)
			if ok && stop && c.installing() {
				// No signal is safe for an install (runner.go): let it finish.
				s.emit(phases.Interruption, phases.SignalReceived, ledger.F(phases.FieldSignal, name), ledger.F(phases.FieldForwarded, false))
				s.stopping = true
				stopFor("on " + name)
				if step == 0 {
					escalate("shim stopping while the package runner may be installing")
				}
				continue
			}
			forwarded := ok && p.Signal(ss) == nil
			s.emit(phases.Interruption, phases.SignalReceived, ledger.F(phases.FieldSignal, name), ledger.F(phases.FieldForwarded, forwarded))
			if stop {
				s.stopping = true
				stopFor("on " + name)
				switch {
				case !forwarded && step == 0:
					// Windows without a console: the ladder from its first step.
					escalate("shim stopping")
				case forwarded && step < 2:
					step, waited = 2, s.cfg.KillGrace
					ladder = time.After(waited)
				}
			}
		case <-ladder:
			escalate(fmt.Sprintf("still running %v after being asked to stop", waited))
		case <-ctx.Done():
			s.stopping = true
			stopFor("as it stopped")
			if step == 0 {
				escalate("shim stopping")
			}
			ctx = context.Background()
		}
	}
}

func sigName(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return proc.SignalName(ss)
	}
	return sig.String()
}
