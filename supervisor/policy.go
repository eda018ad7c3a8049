package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/backoff"
)

var (
	// ErrRestartMode is returned by ParseRestartMode for a word other than on-failure, always or never.
	ErrRestartMode = errors.New("restart mode must be on-failure, always or never")
	// ErrPermafailCode is returned by ParsePermafailCodes for an entry that is not an exit status 0-255.
	ErrPermafailCode = errors.New("permafail code must be an exit status 0-255")
)

// RestartMode says which child exits are restarted, in systemd's vocabulary.
type RestartMode int

const (
	// RestartOnFailure restarts after a non-zero exit or a signal; a clean exit 0 ends the shim.
	RestartOnFailure RestartMode = iota
	// RestartAlways also restarts after exit 0.
	RestartAlways
	// RestartNever never restarts.
	RestartNever
)

// String returns the word ParseRestartMode accepts for m.
func (m RestartMode) String() string {
	switch m {
	case RestartOnFailure:
		return "on-failure"
	case RestartAlways:
		return "always"
	case RestartNever:
		return "never"
	}
	return fmt.Sprintf("RestartMode(%d)", int(m))
}

// ParseRestartMode reads the --restart flag: on-failure, always or never.
func ParseRestartMode(s string) (RestartMode, error) {
	for _, m := range []RestartMode{RestartOnFailure, RestartAlways, RestartNever} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("restart mode %q: %w", s, ErrRestartMode)
}

// ParsePermafailCodes reads the --permafail-codes flag: exit statuses separated by spaces
// or commas, such as "78 126 127". An empty string gives no codes, so every exit may be retried.
func ParsePermafailCodes(s string) ([]int, error) {
	var codes []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > 255 {
			return nil, fmt.Errorf("permafail code %q: %w", f, ErrPermafailCode)
		}
		codes = append(codes, n)
	}
	return codes, nil
}

// Policy is the restart policy of one shim. The zero value is not useful; start from DefaultPolicy.
type Policy struct {
	Mode RestartMode
	// Backoff is the delay before the second consecutive restart; each further one doubles it,
	// up to BackoffMax. The first restart is immediate.
	Backoff, BackoffMax time.Duration
	// At most MaxRestarts restarts within any Window; older attempts fall out of the count.
	MaxRestarts int
	Window      time.Duration
	// StableAfter is how long a run must stay up after a successful handshake for the restart
	// count and the backoff to start over.
	StableAfter time.Duration
	// PermafailCodes are exit codes that time cannot fix; the shim gives up on them at once.
	PermafailCodes []int
	// Jitter returns a value in [0,1) that spreads each delay by ±20%. Nil means no jitter;
	// real callers pass rand.Float64.
	Jitter func() float64
}

// DefaultPolicy returns the documented flag defaults: on-failure, 250ms doubling to 30s,
// 5 restarts within 10m, stable after 60s, permanent exit codes 78 (EX_CONFIG),
// 126 (not executable) and 127 (not found), no jitter.
func DefaultPolicy() Policy {
	return Policy{
		Mode:           RestartOnFailure,
		Backoff:        250 * time.Millisecond,
		BackoffMax:     30 * time.Second,
		MaxRestarts:    5,
		Window:         10 * time.Minute,
		StableAfter:    60 * time.Second,
		PermafailCodes: []int{78, 126, 127},
	}
}

// Exit describes how a run ended, as the supervisor observed it.
type Exit struct {
	Code   int    // exit code, or -1 when killed by a signal
	Signal string // the signal name when killed by one, such as "SIGKILL"
	// SpawnFailed means the process never started (missing binary, permission).
	SpawnFailed bool
	Started     time.Time
	Ended       time.Time
	// HandshakeAt is when this run completed its handshake; zero when it did not.
	HandshakeAt time.Time
	// EverHandshook means some earlier run of this shim completed a handshake.
	EverHandshook bool
}

// Decision is what the supervisor does after one child exit.
type Decision struct {
	Restart bool
	Delay   time.Duration // how long to wait before the restart
	// Attempt is the 1-based restart attempt number within the window. When Restart is
	// false it is the number of restarts already made within the window.
	Attempt int
	Reason  string // why, in words fit for the ledger and one stderr line
	// GiveUp is true when Restart is false because of a failure (restarts_exhausted);
	// false for a clean end.
	GiveUp bool
}

// Restarter holds the restart history of one shim. It reads no clock: the caller passes
// the time, so tests drive it with plain time values. It is not safe for concurrent use;
// the supervisor calls it from the goroutine that waits on the child.
type Restarter struct {
	p           Policy
	attempts    []time.Time // restarts within the window, oldest first
	consecutive int         // restarts since the last stable run; drives the backoff
}

// NewRestarter returns a Restarter with no history.
func NewRestarter(p Policy) *Restarter {
	return &Restarter{p: p}
}

// Next is called once per child exit with the current time from the caller's clock, and
// decides whether and when to restart. The rules, in the order they apply:
//   - "A run that stayed up for StableAfter after a successful handshake resets the count"
//     and the backoff.
//   - A spawn failure is never restarted: time cannot fix a missing binary.
//   - A clean exit 0 ends the shim, unless the mode is always.
//   - "Never restart what time cannot fix": an exit code in PermafailCodes, or a child that
//     exits before it ever completed a handshake in its first run, gives up at once.
//   - Mode never gives up on every failure.
//   - "At most MaxRestarts within Window": attempts older than Window fall out.
//   - Otherwise restart: "first restart immediate, then Backoff doubling with ±20% jitter
//     up to BackoffMax".
func (r *Restarter) Next(now time.Time, e Exit) Decision {
	if !e.HandshakeAt.IsZero() && e.Ended.Sub(e.HandshakeAt) >= r.p.StableAfter {
		r.attempts, r.consecutive = nil, 0
	}
	r.attempts = slices.DeleteFunc(r.attempts, func(t time.Time) bool { return now.Sub(t) >= r.p.Window })
	end := func(giveUp bool, reason string) Decision {
		return Decision{Attempt: len(r.attempts), Reason: reason, GiveUp: giveUp}
	}

	clean := e.Signal == "" && e.Code == 0
	switch {
	case e.SpawnFailed:
		return end(true, "spawn failed")
	case clean && r.p.Mode != RestartAlways:
		return end(false, "clean exit")
	case e.Signal == "" && slices.Contains(r.p.PermafailCodes, e.Code):
		return end(true, fmt.Sprintf("exit code %d is permanent", e.Code))
	case !e.EverHandshook && e.HandshakeAt.IsZero():
		return end(true, "exited before its first handshake")
	case r.p.Mode == RestartNever:
		return end(true, describe(e)+", restart mode never")
	case len(r.attempts) >= r.p.MaxRestarts:
		return end(true, fmt.Sprintf("%d restarts within %s", len(r.attempts), r.p.Window))
	}

	r.attempts = append(r.attempts, now)
	r.consecutive++
	return Decision{Restart: true, Delay: r.delay(), Attempt: len(r.attempts), Reason: describe(e)}
}

// delay implements "first restart immediate, then Backoff doubling (×2 per further
// consecutive attempt) with ±20% jitter, capped at BackoffMax".
func (r *Restarter) delay() time.Duration {
	if r.consecutive <= 1 {
		return 0
	}
	return backoff.Delay(r.p.Backoff, r.p.BackoffMax, r.consecutive-2, r.p.Jitter)
}

// describe names how a run ended: "signal SIGKILL" or "exit code 1".
func describe(e Exit) string {
	if e.Signal != "" {
		return "signal " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.Code)
}
