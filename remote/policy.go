package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/backoff"
)

// Class is what one HTTP exchange came to, as far as the reconnect policy
// cares. Seed 004: "the right [next step] depends on why".
type Class int

const (
	// Answered is any exchange the server answered itself: 2xx, or a 4xx
	// other than those below (its body, or an error, goes to the client).
	Answered Class = iota
	// SessionGone is a 404 to a request that carried a session id. The
	// transport spec: the server "MUST respond to requests containing that
	// session ID with HTTP 404 Not Found", and the client "MUST start a new
	// session by sending a new InitializeRequest without a session ID".
	SessionGone
	// Unreachable is a refused connection, a DNS failure, a reset, a 5xx, or
	// a 404 with no session behind it (a wrong URL: "a failure like any other").
	Unreachable
	// TimedOut is a request that got no answer within the request timeout.
	TimedOut
	// Denied is 401 or 403: a credential time will not fix.
	Denied
)

var classNames = [...]string{"answered", "session_gone", "unreachable", "timed_out", "denied"}

func (c Class) String() string { return classNames[c] }

// Classify names the class of one exchange from its status (0 when there is
// no response) and its error. hadSession says whether the request carried an
// Mcp-Session-Id.
func Classify(status int, err error, hadSession bool) Class {
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		return TimedOut
	case err != nil:
		return Unreachable
	case status == 404 && hadSession:
		return SessionGone
	case status == 404, status >= 500:
		return Unreachable
	case status == 401, status == 403:
		return Denied
	}
	return Answered
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, wsaeConnRefused)
}

// Policy is the reconnect policy of seed 004.
type Policy struct {
	// Backoff is the delay after the first failure; each further consecutive
	// failure doubles it, up to BackoffMax.
	Backoff, BackoffMax time.Duration
	// MaxRetries is how many reconnects follow consecutive failures before the
	// shim gives up: 2 pages "on the third consecutive failure".
	MaxRetries int
	// Jitter returns a value in [0,1) that spreads each delay by ±20%; nil
	// means none. Real callers pass rand.Float64.
	Jitter func() float64
}

// DefaultPolicy is seed 004's: 500 ms doubling to 30 s, give up on the third
// consecutive failure.
func DefaultPolicy() Policy {
	return Policy{Backoff: 500 * time.Millisecond, BackoffMax: 30 * time.Second, MaxRetries: 2}
}

// Action is what the bridge does after one exchange.
type Action int

const (
	// Deliver: the answer (or the server's error body) goes to the client.
	Deliver Action = iota
	// Reinitialize: replay the client's initialize under the shim's own id at
	// once, then re-send the request that met the 404, once.
	Reinitialize
	// FailRequest: this request gets an error; nothing else changes. It may
	// have run, so it is never re-sent.
	FailRequest
	// Reconnect: every request in flight gets an error at once, and a
	// reconnect is tried after Delay.
	Reconnect
	// GiveUp: the failures are consecutive and the retries spent: exit 69.
	GiveUp
)

var actionNames = [...]string{"deliver", "reinitialize", "fail_request", "reconnect", "give_up"}

func (a Action) String() string { return actionNames[a] }

// Decision is the policy's answer for one exchange.
type Decision struct {
	Action Action
	Delay  time.Duration // before the reconnect, for Reconnect
	At     time.Time     // when the reconnect is due
	// Failures is the count of consecutive failures, this one included.
	Failures int
	Reason   string
}

// Reconnector keeps the failure count of one bridge. It reads no clock: the
// caller passes the time. It is not safe for concurrent use.
type Reconnector struct {
	p        Policy
	failures int
}

// NewReconnector returns a Reconnector with no failures.
func NewReconnector(p Policy) *Reconnector { return &Reconnector{p: p} }

// Next decides what follows one exchange of class c. resent says the request
// was already re-sent after a re-initialization. The rules, from seed 004 and
// issue 17:
//   - Any answer resets the count of consecutive failures.
//   - A 404 for a forgotten session is housekeeping, not an outage: "it earns
//     no backoff and no alert": re-initialize at once, count nothing.
//   - "a second 404 in a row is a failure, not a loop".
//   - 401/403: no retry; the count does not move (it is not an outage).
//   - A timeout may have run the request: it gets an error, never a re-send.
//   - Refused, DNS, reset, 5xx: "a growing delay, 500 milliseconds doubling to
//     a cap", ±20% jitter, "and a page on the third consecutive failure".
func (r *Reconnector) Next(now time.Time, c Class, resent bool) Decision {
	switch {
	case c == Answered:
		r.failures = 0
		return Decision{Action: Deliver}
	case c == SessionGone && !resent:
		return Decision{Action: Reinitialize, Failures: r.failures, Reason: "the server forgot the session (HTTP 404)"}
	case c == Denied:
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "the server refused the credentials"}
	case c == TimedOut:
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "no answer within the request timeout"}
	}
	reason := "the server is unreachable"
	if c == SessionGone {
		reason = "a second HTTP 404 in a row after re-initializing"
	}
	r.failures++
	if r.failures > r.p.MaxRetries {
		return Decision{Action: GiveUp, Failures: r.failures, Reason: fmt.Sprintf("%s: %d consecutive failures", reason, r.failures)}
	}
	d := r.delay()
	return Decision{Action: Reconnect, Delay: d, At: now.Add(d), Failures: r.failures, Reason: reason}
}

// Failures is the count of consecutive failures.
func (r *Reconnector) Failures() int { return r.failures }

// delay is Backoff doubled once per consecutive failure after the first,
// capped at BackoffMax, then spread by ±20%.
func (r *Reconnector) delay() time.Duration {
	return backoff.Delay(r.p.Backoff, r.p.BackoffMax, r.failures-1, r.p.Jitter)
}
