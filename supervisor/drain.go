package supervisor

import (
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
)

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
