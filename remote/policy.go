package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/backoff"
)

// Class is what one HTTP exchange came to, as far as the reconnect policy
// cares: the right next step depends on why it failed.
type Class int

const (
	// Answered is any exchange the server answered itself: 2xx, or a 4xx
	// other than those below (its body, or an error, goes to the client).
	Answered Class = iota
	// SessionGone is a forgotten session (SessionMiss). The transport spec:
	// the server "MUST respond to requests containing that session ID with
	// HTTP 404 Not Found", and the client "MUST start a new session by
	// sending a new InitializeRequest without a session ID".
	SessionGone
	// Unreachable is a refused connection, a DNS failure, a reset, a 5xx, or
	// a 404 with no session behind it (a wrong URL: "a failure like any other").
	Unreachable
	// TimedOut is a request that got no answer within the request timeout.
	TimedOut
	// Denied is 401 or 403: a credential time will not fix.
	Denied
	// Fault is an exchange that cannot succeed as it is, whose cause time
	// does not mend (fault.go): a certificate this machine does not trust, a
	// character no header may carry. No outage: nothing is retried.
	Fault
)

var classNames = [...]string{"answered", "session_gone", "unreachable", "timed_out", "denied", "fault"}

func (c Class) String() string { return classNames[c] }

// Classify names the class of one exchange from its status (0 when there is
// no response), the start of its body and its error. hadSession says whether
// the request carried the current Mcp-Session-Id.
func Classify(status int, body []byte, err error, hadSession bool) Class {
	why, _ := fault(err)
	switch {
	case why != "":
		return Fault
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		return TimedOut
	case err != nil:
		return Unreachable
	case hadSession && SessionMiss(status, body) != "":
		return SessionGone
	case status == 404 && hadSession && rpcCode(body) == methodNotFound:
		return Answered // a method the server lacks, spelled as HTTP 404: its answer goes to the client
	case status == 404, status >= 500, status == 429:
		return Unreachable // 429 and 503 say when to come back (Retry-After)
	case status == 401, status == 403:
		return Denied
	}
	return Answered
}

// Session-miss rules, as the ledger names them.
const (
	Miss404     = "http_404"              // the spec's answer to a forgotten session
	Miss400Text = "http_400_session_text" // a 400 whose body says the session is unknown
)

// sessionMissTexts are what real servers write in a 400 (or 404) for a
// session they do not know, read from their code: the TypeScript SDK's
// examples and @modelcontextprotocol/server-everything, and the Python SDK up
// to 1.25, "Bad Request: No valid session ID provided" (JSON-RPC -32000, or
// text/plain); the TypeScript examples' GET and DELETE, "Invalid or missing
// session ID"; the Python SDK from 1.26, 404 with -32600 "Session not
// found"; mcp-go with WithStateful, 404 "Invalid session ID".
var sessionMissTexts = []string{"no valid session id provided", "invalid or missing session id", "session not found", "invalid session id"}

// methodNotFound is JSON-RPC's -32601: a 404 carrying it is about the
// method, not the session.
const methodNotFound = -32601

// SessionMiss names the rule by which an answer to a request that carried
// the current session id says the server forgot the session, or "": a 404
// whose body is not a JSON-RPC -32601, or a 400 whose body carries one of
// the known session-miss texts. Claude Code re-initializes on 404 and never
// on 400, so a server-everything restart broke it for good; a 400 for any
// other reason (a bad request) is the server's answer.
func SessionMiss(status int, body []byte) string {
	switch status {
	case 404:
		if rpcCode(body) != methodNotFound {
			return Miss404
		}
	case 400:
		lower := bytes.ToLower(body)
		for _, t := range sessionMissTexts {
			if bytes.Contains(lower, []byte(t)) {
				return Miss400Text
			}
		}
	}
	return ""
}

// rpcCode is the error code of a JSON-RPC error body, 0 when it is none.
func rpcCode(body []byte) int {
	var m struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &m) != nil {
		return 0
	}
	return m.Error.Code
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, wsaeConnRefused)
}

// Policy is the reconnect policy: 500 milliseconds doubling to a cap, and a
// page on the third consecutive failure. A page is a signal
// to a person, not an exit: the client (Claude Code, Cursor) cannot restart
// the shim, so it keeps trying until the client leaves or GiveUpAfter.
type Policy struct {
	// Backoff is the delay after the first failure; each further consecutive
	// failure doubles it, up to BackoffMax.
	Backoff, BackoffMax time.Duration
	// MaxRetries is how many consecutive failures pass before the page: 2
	// pages "on the third consecutive failure".
	MaxRetries int
	// GiveUpAfter, when not 0, is how long consecutive failures may last
	// before the shim gives up (exit 69); 0 never gives up.
	GiveUpAfter time.Duration
	// Jitter returns a value in [0,1) that spreads each delay by ±20%; nil
	// means none. Real callers pass rand.Float64.
	Jitter func() float64
}

// DefaultPolicy: 500 ms doubling to 30 s, a page on the third consecutive
// failure, no giving up.
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
	// GiveUp: the failures have lasted GiveUpAfter: exit 69.
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
	// Page is set on the failure that pages a person (the third).
	Page bool
	// Since is when the consecutive failures began.
	Since time.Time
}

// maxRetryAfter bounds a server's Retry-After: a typo of a day must not
// park the bridge for a day.
const maxRetryAfter = 10 * time.Minute

// streamRetry is the wait an event stream's retry field asks for before it
// is resumed, capped as a Retry-After is: the field may ask for 2^31-1 ms
// (24.8 days). A request's stream also has its deadline.
func streamRetry(retry time.Duration) time.Duration { return min(retry, maxRetryAfter) }

// Reconnector keeps the failure count of one bridge. It reads no clock: the
// caller passes the time. It is not safe for concurrent use.
type Reconnector struct {
	p        Policy
	failures int
	since    time.Time // the first of the consecutive failures
}

// NewReconnector returns a Reconnector with no failures.
func NewReconnector(p Policy) *Reconnector { return &Reconnector{p: p} }

// Next decides what follows one exchange of class c. resent says the request
// was already re-sent after a re-initialization; retryAfter is the server's
// Retry-After on a 429 or 503 (0 when none). The rules (issues 17 and 23):
//   - Any answer resets the count of consecutive failures.
//   - A 404 for a forgotten session is housekeeping, not an outage: "it earns
//     no backoff and no alert": re-initialize at once, count nothing.
//   - A second miss right after re-initializing fails its request, with no
//     re-send and no count: not a loop, and not an outage.
//   - 401/403: no retry; the count does not move (it is not an outage).
//   - A fault time does not mend (an untrusted certificate, a control
//     character in a header): its request fails, the count does not move.
//   - A timeout may have run the request: it gets an error, never a re-send.
//   - Refused, DNS, reset, 5xx, 429: "a growing delay, 500 milliseconds
//     doubling to a cap", ±20% jitter, or the server's Retry-After when it is
//     longer, "and a page on the third consecutive failure"; retries go on
//     until GiveUpAfter, if set.
func (r *Reconnector) Next(now time.Time, c Class, resent bool, retryAfter time.Duration) Decision {
	switch {
	case c == Answered:
		r.failures = 0
		return Decision{Action: Deliver}
	case c == SessionGone && !resent:
		return Decision{Action: Reinitialize, Failures: r.failures, Reason: "the server forgot the session"}
	case c == Denied:
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "the server refused the credentials"}
	case c == Fault:
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "not an outage, so not retried"}
	case c == TimedOut:
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "no answer within the request timeout"}
	case c == SessionGone:
		// Issue 23: "A second miss ... is an error to the client and no
		// re-send": the server answered, so it is no outage (a server whose
		// replicas share no sessions would otherwise page forever).
		return Decision{Action: FailRequest, Failures: r.failures, Reason: "the server forgot the session again right after re-initializing"}
	}
	reason := "the server is unreachable"
	r.failures++
	if r.failures == 1 {
		r.since = now
	}
	if r.p.GiveUpAfter > 0 && now.Sub(r.since) >= r.p.GiveUpAfter {
		return Decision{Action: GiveUp, Failures: r.failures, Since: r.since,
			Reason: fmt.Sprintf("%s: %d consecutive failures in %v", reason, r.failures, now.Sub(r.since).Round(time.Millisecond))}
	}
	d := max(r.delay(), min(retryAfter, maxRetryAfter))
	if r.p.GiveUpAfter > 0 {
		// --give-up-after is the bound: the last attempt is made then,
		// whatever a Retry-After asked for.
		d = max(min(d, r.since.Add(r.p.GiveUpAfter).Sub(now)), 0)
	}
	return Decision{Action: Reconnect, Delay: d, At: now.Add(d), Failures: r.failures, Reason: reason,
		Page: r.failures == r.p.MaxRetries+1, Since: r.since}
}

// Failures is the count of consecutive failures.
func (r *Reconnector) Failures() int { return r.failures }

// delay is Backoff doubled once per consecutive failure after the first,
// capped at BackoffMax, then spread by ±20%.
func (r *Reconnector) delay() time.Duration {
	return backoff.Delay(r.p.Backoff, r.p.BackoffMax, r.failures-1, r.p.Jitter)
}
