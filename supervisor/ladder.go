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
// signals meanwhile. It reports whether the shim asked the child to stop.
func (s *Supervisor) supervise(ctx context.Context, c *child, stdoutDone <-chan error) (requested bool, stdoutOpen <-chan error) {
	p := c.p
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
			s.emit(phases.Interruption, phases.KillRequested, ledger.F("signal", "SIGTERM"), ledger.F("reason", reason))
			_ = p.Signal(syscall.SIGTERM)
		case 2:
			step = 3
			s.emit(phases.Interruption, phases.KillRequested, ledger.F("signal", "SIGKILL"), ledger.F("reason", reason))
			_ = p.Signal(syscall.SIGKILL)
		default:
			return
		}
		waited = s.cfg.KillGrace
		if step == 1 {
			waited = s.closedGrace(c) // a runner still installing finishes first
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
			if ok && stop && c.installing() {
				// No signal is safe for an install (runner.go): let it finish.
				s.emit(phases.Interruption, phases.SignalReceived, ledger.F("signal", name), ledger.F("forwarded", false))
				s.stopping = true
				if step == 0 {
					escalate("shim stopping while the package runner may be installing")
				}
				continue
			}
			s.emit(phases.Interruption, phases.SignalReceived, ledger.F("signal", name), ledger.F("forwarded", true))
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

// drain waits for the child's pipes to reach EOF, and calls owe once what
// the child wrote before its exit was relayed: at stdout's EOF, or one grace
// after the exit when something else (a grandchild) keeps the pipe open and
// moving — its output is not an answer the client should wait a minute for.
// A grandchild holding the pipes is killed with the group; one that escaped
// the group is cut off by closing our ends.
func (s *Supervisor) drain(p *proc.Process, out <-chan error, errDone <-chan struct{}, owe func()) {
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

func sigName(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return proc.SignalName(ss)
	}
	return sig.String()
}
