package supervisor

import (
	"time"
)

// A package runner (npx, uvx, pnpm dlx, bunx) may still be installing the
// server when the client gives up, and no signal is safe then. npm's
// installer (@npmcli/arborist's reify) catches the first SIGTERM and rolls
// its half-built tree back, but once reify is over npx writes the install's
// package.json with no handler left: a SIGTERM there, or a SIGKILL at any
// point, leaves a tree npx takes as installed, and every later start fails
// (`Could not read package.json`, `Invalid package.json`, `Cannot find
// package 'zod'`). So while a runner has not answered the handshake the
// shim closes its stdin and lets the install finish: the server it then
// starts reads EOF and exits. Only after InstallGrace does the ordinary
// ladder (SIGTERM, SIGKILL) go on; the client's own signals are not
// forwarded meanwhile. After the handshake the install is done.

// InstallGrace is how long a package runner that has not yet answered the
// handshake may take, once its stdin is closed, to finish and exit by itself.
const InstallGrace = 2 * time.Minute

// installing reports whether the child may be in the middle of an install:
// a package runner whose run has not answered the handshake yet.
func (c *child) installing() bool {
	return c.runner && c.hsAt.Load() == 0
}

// tellGuard writes b to the run's guard, if it has one. Once the loop closed
// the guard the write fails, harmlessly: the run is over.
func (c *child) tellGuard(b byte) {
	if c.guarded() == nil && c.start.guard != nil {
		_, _ = c.start.guard.Write([]byte{b})
	}
}

// closedGrace is how long the ladder waits after closing c's stdin before
// its SIGTERM.
func (s *Supervisor) closedGrace(c *child) time.Duration {
	if c.installing() {
		return InstallGrace
	}
	return s.cfg.KillGrace
}
