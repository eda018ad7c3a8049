package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		status     int
		err        error
		hadSession bool
		want       Class
	}{
		{200, nil, true, Answered},
		{202, nil, false, Answered},
		{400, nil, true, Answered}, // the server's own error body goes to the client
		{404, nil, true, SessionGone},
		{404, nil, false, Unreachable}, // a wrong URL: "a failure like any other"
		{401, nil, true, Denied},
		{403, nil, false, Denied},
		{500, nil, true, Unreachable},
		{503, nil, false, Unreachable},
		{0, refused, false, Unreachable},
		{0, &net.DNSError{Err: "no such host", Name: "mcp.invalid"}, false, Unreachable},
		{0, io.ErrUnexpectedEOF, true, Unreachable},
		{0, fmt.Errorf("post: %w", context.DeadlineExceeded), true, TimedOut},
	} {
		if got := Classify(tc.status, nil, tc.err, tc.hadSession); got != tc.want {
			t.Errorf("Classify(%d, %v, session %v) = %v, want %v", tc.status, tc.err, tc.hadSession, got, tc.want)
		}
	}
}

func TestSessionMiss(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{404, "", Miss404},
		{404, "session not found\n", Miss404},  // go-sdk
		{404, "Invalid session ID\n", Miss404}, // mcp-go WithStateful
		{404, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`, Miss404},                   // Python SDK 1.26
		{404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, ""},                                      // a method, not the session
		{400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`, Miss400Text}, // TypeScript SDK, server-everything
		{400, "Bad Request: No valid session ID provided", Miss400Text},                                                                 // Python SDK up to 1.25, text/plain
		{400, "Invalid or missing session ID", Miss400Text},
		{400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`, ""},
		{400, "", ""},
		{500, "session not found", ""},
	} {
		if got := SessionMiss(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("SessionMiss(%d, %q) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	if got := Classify(400, []byte("Bad Request: No valid session ID provided"), nil, false); got != Answered {
		t.Errorf("a session-miss 400 to a request without a session: %v, want answered", got)
	}
	if got := Classify(404, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`), nil, true); got != Answered {
		t.Errorf("a -32601 404 with a session: %v, want answered", got)
	}
}

// step is one exchange fed to the policy, and what it must decide.
type step struct {
	class   Class
	resent  bool
	action  Action
	delay   time.Duration
	failure int
}

func TestReconnector(t *testing.T) {
	p := Policy{Backoff: 500 * time.Millisecond, BackoffMax: 30 * time.Second, MaxRetries: 2}
	for _, tc := range []struct {
		name  string
		p     Policy
		steps []step
	}{
		{"seed 004: refused three times pages on the third and goes on", p, []step{
			{Unreachable, false, Reconnect, 500 * time.Millisecond, 1},
			{Unreachable, false, Reconnect, time.Second, 2},
			{Unreachable, false, Reconnect, 2 * time.Second, 3},
			{Unreachable, false, Reconnect, 4 * time.Second, 4},
		}},
		{"a forgotten session earns no backoff and no failure", p, []step{
			{SessionGone, false, Reinitialize, 0, 0},
			{Answered, true, Deliver, 0, 0},
			{SessionGone, false, Reinitialize, 0, 0},
			{Answered, true, Deliver, 0, 0},
			{SessionGone, false, Reinitialize, 0, 0},
			{Answered, true, Deliver, 0, 0},
		}},
		{"a second miss in a row fails its request, not a loop", p, []step{
			{SessionGone, false, Reinitialize, 0, 0},
			{SessionGone, true, FailRequest, 0, 0},
		}},
		{"an answer resets the count", p, []step{
			{Unreachable, false, Reconnect, 500 * time.Millisecond, 1},
			{Unreachable, false, Reconnect, time.Second, 2},
			{Answered, false, Deliver, 0, 0},
			{Unreachable, false, Reconnect, 500 * time.Millisecond, 1},
		}},
		{"401 and 403 are never retried and count nothing", p, []step{
			{Denied, false, FailRequest, 0, 0},
			{Denied, false, FailRequest, 0, 0},
			{Denied, false, FailRequest, 0, 0},
			{Denied, false, FailRequest, 0, 0},
		}},
		{"a timeout fails its request only", p, []step{
			{TimedOut, false, FailRequest, 0, 0},
			{Unreachable, false, Reconnect, 500 * time.Millisecond, 1},
			{TimedOut, false, FailRequest, 0, 1},
		}},
		{"the delay doubles to the cap", Policy{Backoff: 500 * time.Millisecond, BackoffMax: 3 * time.Second, MaxRetries: 6}, []step{
			{Unreachable, false, Reconnect, 500 * time.Millisecond, 1},
			{Unreachable, false, Reconnect, time.Second, 2},
			{Unreachable, false, Reconnect, 2 * time.Second, 3},
			{Unreachable, false, Reconnect, 3 * time.Second, 4},
			{Unreachable, false, Reconnect, 3 * time.Second, 5},
			{Unreachable, false, Reconnect, 3 * time.Second, 6},
			{Unreachable, false, Reconnect, 3 * time.Second, 7},
		}},
		{"--give-up-after 5s", Policy{Backoff: 2 * time.Second, BackoffMax: 30 * time.Second, GiveUpAfter: 5 * time.Second}, []step{
			{Unreachable, false, Reconnect, 2 * time.Second, 1},
			{Unreachable, false, Reconnect, 2999 * time.Millisecond, 2}, // not 4 s: the last attempt is at the bound
			{Unreachable, false, GiveUp, 0, 3},                          // 5 s after the first
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReconnector(tc.p)
			now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) // the fake clock
			for i, s := range tc.steps {
				d := r.Next(now, s.class, s.resent, 0)
				if d.Action != s.action || d.Delay != s.delay || d.Failures != s.failure {
					t.Fatalf("step %d: Next(%v, resent %v) = %v delay %v failures %d, want %v delay %v failures %d",
						i+1, s.class, s.resent, d.Action, d.Delay, d.Failures, s.action, s.delay, s.failure)
				}
				if d.Action == Reconnect && !d.At.Equal(now.Add(d.Delay)) {
					t.Fatalf("step %d: At = %v, want now+%v", i+1, d.At, d.Delay)
				}
				now = now.Add(d.Delay + time.Millisecond)
			}
		})
	}
}

// TestReconnectorPageAndRetryAfter: the page comes once, on the third
// consecutive failure; a Retry-After longer than the backoff is honoured,
// a shorter one is not a reason to hurry, a huge one is bounded.
func TestReconnectorPageAndRetryAfter(t *testing.T) {
	r := NewReconnector(DefaultPolicy())
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var pages []int
	for i := 1; i <= 6; i++ {
		if d := r.Next(now, Unreachable, false, 0); d.Page {
			pages = append(pages, d.Failures)
		}
	}
	if len(pages) != 1 || pages[0] != 3 {
		t.Errorf("pages on failures %v, want [3]", pages)
	}
	for _, tc := range []struct{ after, want time.Duration }{
		{3 * time.Second, 3 * time.Second},
		{100 * time.Millisecond, 500 * time.Millisecond},
		{48 * time.Hour, maxRetryAfter},
	} {
		if d := NewReconnector(DefaultPolicy()).Next(now, Unreachable, false, tc.after); d.Delay != tc.want {
			t.Errorf("Retry-After %v: delay %v, want %v", tc.after, d.Delay, tc.want)
		}
	}
}

func TestReconnectorJitter(t *testing.T) {
	for _, j := range []struct {
		jitter float64
		want   time.Duration
	}{{0, 400 * time.Millisecond}, {0.5, 500 * time.Millisecond}, {0.999999, 600 * time.Millisecond}} {
		p := DefaultPolicy()
		p.Jitter = func() float64 { return j.jitter }
		d := NewReconnector(p).Next(time.Time{}, Unreachable, false, 0)
		if diff := d.Delay - j.want; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("jitter %v: delay %v, want %v (±20%% of 500ms)", j.jitter, d.Delay, j.want)
		}
	}
}

func TestParseHeader(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret-value", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		in, name, value, err string
	}{
		{in: "Authorization: Bearer ${TOKEN}", name: "Authorization", value: "Bearer s3cret-value"},
		{in: "x-api-key:${TOKEN}", name: "X-Api-Key", value: "s3cret-value"},
		{in: "X-Team: ${TEAM:-core}", name: "X-Team", value: "core"},
		{in: "X-Team: ${EMPTY:-core}", name: "X-Team", value: "core"},
		{in: "X-Empty: ${EMPTY}", name: "X-Empty", value: ""},
		{in: "X-Two: ${TOKEN}/${TEAM:-a}", name: "X-Two", value: "s3cret-value/a"},
		{in: "X-Literal: $TOKEN", name: "X-Literal", value: "$TOKEN"},
		{in: "Authorization: Bearer ${MISSING}", err: "MISSING is not set"},
		{in: "Bearer abc", err: "want 'Name: value'"},
		{in: "Mcp-Session-Id: x", err: "sets this header itself"},
	} {
		h, err := ParseHeader(tc.in, lookup)
		if tc.err != "" {
			if err == nil || !contains(err.Error(), tc.err) {
				t.Errorf("ParseHeader(%q) error %v, want one saying %q", tc.in, err, tc.err)
			}
			if err != nil && contains(err.Error(), "s3cret") {
				t.Errorf("ParseHeader(%q) error leaks the value: %v", tc.in, err)
			}
			continue
		}
		if err != nil || h.Name != tc.name || h.Value != tc.value {
			t.Errorf("ParseHeader(%q) = %q: %q, %v; want %q: %q", tc.in, h.Name, h.Value, err, tc.name, tc.value)
		}
	}
}

func TestIDsAreValues(t *testing.T) {
	same := [][2]string{{`7`, `7.0`}, {`7`, `7e0`}, {`"7"`, `"\u0037"`}, {` 1 `, `1`}}
	for _, p := range same {
		if keyOf([]byte(p[0])) != keyOf([]byte(p[1])) {
			t.Errorf("ids %s and %s differ, want one value", p[0], p[1])
		}
	}
	differ := [][2]string{{`7`, `"7"`}, {`1`, `2`}, {`"a"`, `"A"`}}
	for _, p := range differ {
		if keyOf([]byte(p[0])) == keyOf([]byte(p[1])) {
			t.Errorf("ids %s and %s are one value, want two", p[0], p[1])
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}` + "\n", `{"a":1}`},
		{"{\n  \"a\": \"x\\ny\",\n  \"b\": [1, 2]\n}\n", `{"a":"x\ny","b":[1,2]}`},
	} {
		got, ok := oneLine([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("oneLine(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := oneLine([]byte("<html>\n</html>")); ok {
		t.Error("oneLine accepted HTML")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestStreamRetryCapped: an event stream's retry field is waited as it asks,
// up to the cap of a Retry-After; the largest it can spell (2^31-1 ms, 24.8
// days) waits ten minutes.
func TestStreamRetryCapped(t *testing.T) {
	for _, c := range []struct{ retry, want time.Duration }{
		{0, 0},
		{1500 * time.Millisecond, 1500 * time.Millisecond},
		{10 * time.Minute, 10 * time.Minute},
		{(1<<31 - 1) * time.Millisecond, 10 * time.Minute},
	} {
		if got := streamRetry(c.retry); got != c.want {
			t.Errorf("streamRetry(%v) = %v, want %v", c.retry, got, c.want)
		}
	}
}
