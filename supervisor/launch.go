package supervisor

import (
	"errors"
	"os"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/proc"
)

// Launch is one start of the server: the process, or why it did not start,
// and the guard that ends its group should the shim die. runChild makes one
// per generation. The first one the caller may make before Run, with Spawn:
// the server then starts while the shim opens its ledger and starts its
// recorder, and the start's records are written once Run has them, with
// their own times.
type Launch struct {
	run       string
	requested time.Time // when the start was asked for (spawn_requested)
	p         *proc.Process
	err       *proc.SpawnError // the start failed; p is nil
	failed    time.Time        // when it did (spawn_failed)
	runner    bool             // a package runner (runner.go)
	ctr       *container       // a container engine's run (container.go)

	// guarded is closed once the guard's start is over: guard is its pipe,
	// or nil with guardErr, or nil with no guard asked for. The guard runs
	// beside the starting server, off the way to the request; only the
	// server's first bytes to the client wait for it (runChild).
	guarded  chan struct{}
	guard    *os.File
	guardErr error
}

// Spawn starts the server now, and its guard beside it (argv as Config's
// Guard, nil for none), for Config.First. A start that fails is reported
// by Run, as any start that fails.
func Spawn(spec proc.Spec, guard []string) *Launch {
	l := newLaunch(spec)
	l.start(spec, guard)
	return l
}

// newLaunch is a start of spec about to be asked for: its run id and time.
func newLaunch(spec proc.Spec) *Launch {
	now := time.Now()
	return &Launch{run: ledger.NewID("run", now), requested: now, runner: proc.PackageRunner(spec.Path, spec.Args), guarded: make(chan struct{})}
}

// start starts the process, then its guard on a goroutine of its own.
func (l *Launch) start(spec proc.Spec, guard []string) {
	l.ctr, spec, guard = containerOf(spec, guard)
	p, err := proc.Start(spec)
	if err != nil {
		if !errors.As(err, &l.err) {
			l.err = proc.Classify(err, spec.Dir)
		}
		l.failed = time.Now()
		close(l.guarded)
		return
	}
	l.p = p
	if len(guard) == 0 {
		close(l.guarded)
		return
	}
	grace := time.Duration(0)
	if l.runner {
		grace = InstallGrace
	}
	// The guard's start: returns once it runs (it holds its pipe) or failed.
	go func() {
		defer close(l.guarded)
		l.guard, l.guardErr = proc.StartGuard(guard, p, grace)
	}()
}

// guarded waits until the child's guard runs, or its start failed (the
// error), or there is no guard.
func (c *child) guarded() error {
	<-c.start.guarded
	return c.start.guardErr
}

// releaseGuard closes the guard's pipe once the run is over: the guard kills
// what is left of the group and exits.
func (c *child) releaseGuard() {
	<-c.start.guarded
	if c.start.guard != nil {
		c.start.guard.Close()
	}
}
