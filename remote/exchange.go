package remote

// One client message, one HTTP exchange: send posts it, the policy judges
// what came back, and the answer reaches the client or an error does.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// send posts one client message and handles what comes back, following the
// policy. resent marks the one re-send after a re-initialization.
func (b *bridge) send(ctx context.Context, line []byte, msg message, resent bool) {
	b.sendTry(ctx, line, msg, resent, 0)
}

// sendTry is send after authTries sign-ins for this message (auth.go).
func (b *bridge) sendTry(ctx context.Context, line []byte, msg message, resent bool, authTries int) {
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	resp, cancelTimer, err := b.post(ctx, line, msg, session)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Cancelled by an outage (already answered) or because the bridge is
		// stopping: no verdict on the server.
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the request was cut off", b.cfg.Name))
		return
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if b.cfg.Auth != nil && (status == http.StatusUnauthorized || status == http.StatusForbidden) {
		drain(resp)
		cancelTimer()
		if err := b.challenged(ctx, resp, authTries); err != nil {
			b.authFailed(msg, status, err)
			return
		}
		b.sendTry(ctx, line, msg, resent, authTries+1)
		return
	}
	class := Classify(status, err, session != "")
	d := b.judge(class, resent, describeStatus(status, err))
	switch d.Action {
	case Deliver:
		b.deliverBody(ctx, resp, cancelTimer, msg, session)
		return
	case Reinitialize:
		drain(resp)
		cancelTimer()
		if b.reinitialize(session) {
			b.emit(phases.Supervision, phases.ResentAfterReinit, ledger.F("request_id", string(msg.rawID)), ledger.F("method", msg.method),
				ledger.F("tool", msg.name), ledger.F("status", status), ledger.F("old_session", digest(session)))
			b.observe(phases.FromClient, line) // the new run sees the request it is sent
			b.send(ctx, line, msg, true)
			return
		}
		// The server forgot the session and will not take a new one: that
		// counts, or a dead server would be re-initialized forever.
		d = b.judge(Unreachable, false, "the session could not be re-initialized")
	}
	text, data := b.failureText(class, status, resp, err, d)
	cancelTimer()
	b.failed(msg, d, text, data)
}

// judge asks the policy about one exchange. A failure while an outage is
// already being handled only fails its request: one outage, one count.
func (b *bridge) judge(class Class, resent bool, why string) Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	if class == Unreachable && b.down {
		return Decision{Action: FailRequest, Reason: "the server is unreachable"}
	}
	d := b.recon.Next(time.Now(), class, resent)
	if d.Action == Reconnect || d.Action == GiveUp {
		b.down, b.downReason = true, why
	}
	return d
}

// failed answers the requests of msg with text, and on an outage every
// other request in flight too ("requests in flight get errors at once"),
// then hands the outage to the loop.
func (b *bridge) failed(msg message, d Decision, text string, data map[string]any) {
	msg.each(func(m message) {
		if m.isRequest() {
			b.fail(m.id, text, data)
		}
	})
	if d.Action == Reconnect || d.Action == GiveUp {
		b.failInFlight(fmt.Sprintf("mcpshim: server %s became unreachable before answering", b.cfg.Name))
		b.outage <- d
	}
}

// failureText is the error a request gets, and its data.
func (b *bridge) failureText(class Class, status int, resp *http.Response, err error, d Decision) (string, map[string]any) {
	data := map[string]any{"url": b.endpoint()}
	if status != 0 {
		data["http_status"] = status
	}
	text := fmt.Sprintf("mcpshim: server %s: %s (%s)", b.cfg.Name, d.Reason, b.scrub(describeStatus(status, err)))
	if class == Unreachable || class == TimedOut {
		text += "; not re-sent, as it may have run"
	}
	if class == Denied && resp != nil {
		ch := b.scrub(resp.Header.Get("Www-Authenticate"))
		c := parseChallenge(ch)
		fields := []ledger.Field{ledger.F("status", status), ledger.F("www_authenticate", ch)}
		for _, k := range []string{"scheme", "realm", "resource_metadata", "error", "scope"} {
			if c[k] != "" {
				fields = append(fields, ledger.F(k, c[k]))
			}
		}
		b.emit(phases.Handshake, phases.AuthFailed, fields...)
		if ch != "" {
			text += "; WWW-Authenticate: " + ch
			data["www_authenticate"] = ch
		}
		text += "; set the credential with --header 'Authorization: Bearer ${TOKEN}' and TOKEN in the entry's env (OAuth is not supported yet)"
		b.say("HTTP %d: %s", status, ch)
	}
	if resp != nil {
		if excerpt := bodyExcerpt(resp); excerpt != "" {
			data["body"] = b.scrub(excerpt)
		}
	}
	return text, data
}

// post sends one message. The timer cancels the request when the headers,
// or a JSON body, take longer than Timeout; the caller stops it with
// cancelTimer once the body is read.
func (b *bridge) post(ctx context.Context, line []byte, msg message, session string) (*http.Response, func(), error) {
	rctx, cancel := context.WithCancel(ctx)
	var timedOut atomic.Bool
	timer := time.AfterFunc(b.cfg.Timeout, func() { timedOut.Store(true); cancel() })
	stop := func() { timer.Stop(); cancel() }
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, b.cfg.URL.String(), bytes.NewReader(line))
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	b.setHeaders(req, msg, session)
	start := time.Now()
	resp, err := b.http.Do(req)
	if err != nil && timedOut.Load() {
		err = fmt.Errorf("%w after %v", context.DeadlineExceeded, b.cfg.Timeout)
	}
	var respBytes int64
	if resp != nil {
		respBytes = resp.ContentLength
	}
	b.recordExchange(req, resp, err, start, int64(len(line)), respBytes, msg, session)
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	if streamless(msg) {
		timer.Stop() // the headers came: a listen stream may be silent for as long as it likes
		return resp, stop, nil
	}
	// Reset on each read: silence is bounded, a long stream is not.
	resp.Body = &timedBody{ReadCloser: resp.Body, timer: timer, d: b.cfg.Timeout}
	return resp, stop, nil
}

// streamless reports whether a request's stream is bounded by Timeout:
// subscriptions/listen is meant to stay open and silent.
func streamless(msg message) bool { return msg.method == "subscriptions/listen" }

// timedBody re-arms the request timer on each read, so a body or a stream
// that goes silent for Timeout is cut.
type timedBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func (t *timedBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.timer.Reset(t.d)
	}
	return n, err
}

func (b *bridge) setHeaders(req *http.Request, msg message, session string) {
	for _, h := range b.cfg.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if a := b.authorizationHeader(req.Context()); a != "" {
		req.Header.Set("Authorization", a)
		if p := b.cfg.Auth.Proof(req.Method, req.URL.String()); p != "" {
			req.Header.Set("DPoP", p)
		}
	}
	if req.Method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	b.mu.Lock()
	version := b.version
	b.mu.Unlock()
	if msg.version != "" && msg.method != "initialize" {
		version = msg.version // 2026-07-28: each request names its own
	}
	if version != "" && msg.method != "initialize" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if modern(version) && msg.isRequest() {
		// 2026-07-28 standard headers: the server checks them against the body.
		req.Header.Set("Mcp-Method", msg.method)
		if msg.name != "" {
			req.Header.Set("Mcp-Name", msg.name)
		}
	}
}

// deliverBody passes a successful answer to the client: a JSON body as one
// line, each event of a stream as one line. A body for a notification or an
// answer (202 Accepted) carries nothing.
func (b *bridge) deliverBody(ctx context.Context, resp *http.Response, cancelTimer func(), msg message, session string) {
	defer cancelTimer()
	defer resp.Body.Close()
	if msg.method == "initialize" && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			b.mu.Lock()
			b.session = sid
			b.mu.Unlock()
		}
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ctype == "text/event-stream":
		sse := newSSEReader(resp.Body)
		resumed := false
		for {
			ev, err := sse.next()
			if err != nil && ctx.Err() == nil && !resumed && sse.lastID != "" && session != "" {
				// The transport spec: a client "MAY poll the server" with a GET
				// and Last-Event-ID to resume a stream that ended early.
				resumed = true
				if r := b.resume(ctx, session, sse.lastID); r != nil {
					defer r.Close()
					sse = newSSEReader(r)
					continue
				}
			}
			if err != nil {
				b.brokeOff(ctx, msg, err)
				return
			}
			b.fromServer(ev.data)
			if b.answered(msg) {
				return
			}
		}
	case ctype == "application/json":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			b.brokeOff(ctx, msg, err)
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			b.fromServer(body)
		}
		if resp.StatusCode/100 != 2 {
			b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered HTTP %d: %s", b.cfg.Name, resp.StatusCode, b.scrub(redact.Preview(bytes.TrimSpace(body), 300))))
		} else {
			b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered without a response to this request", b.cfg.Name))
		}
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode/100 == 2 && !hasRequest(msg) {
			// 202 Accepted for a notification or an answer
			if msg.method == "notifications/initialized" {
				b.startGET()
			}
			return
		}
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered HTTP %d with %q instead of JSON or an event stream", b.cfg.Name, resp.StatusCode, ctype))
	}
}

// brokeOff handles an answer cut off after the request was sent: the
// request may have run, so it is never re-sent; a reset is a failure of the
// server, as a refused connection is.
func (b *bridge) brokeOff(ctx context.Context, msg message, err error) {
	if ctx.Err() != nil {
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the request was cut off", b.cfg.Name))
		return
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the stream ended before the answer
	}
	d := b.judge(Unreachable, false, describeErr(err))
	text := fmt.Sprintf("mcpshim: server %s: the answer broke off (%s); not re-sent, as it may have run", b.cfg.Name, describeErr(err))
	b.failed(msg, d, text, map[string]any{"url": b.endpoint()})
}

// resume opens a GET with Last-Event-ID for the rest of a request's stream;
// nil when the server offers none.
func (b *bridge) resume(ctx context.Context, session, lastID string) io.ReadCloser {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.URL.String(), nil)
	b.setHeaders(req, message{}, session)
	req.Header.Set("Last-Event-ID", lastID)
	start := time.Now()
	resp, err := b.http.Do(req)
	b.recordExchange(req, resp, err, start, 0, 0, message{}, session)
	if err != nil {
		return nil
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ctype != "text/event-stream" {
		drain(resp)
		return nil
	}
	return resp.Body
}

// readAnswer reads a JSON body, or an event stream up to the message that
// answers id.
func readAnswer(resp *http.Response, id idKey) ([]byte, error) {
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ctype != "text/event-stream" {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return nil, err
		}
		line, ok := oneLine(body)
		if !ok {
			return nil, fmt.Errorf("the answer is not JSON (%s)", ctype)
		}
		return line, nil
	}
	sse := newSSEReader(resp.Body)
	for {
		ev, err := sse.next()
		if err != nil {
			return nil, fmt.Errorf("the event stream ended before the answer: %w", err)
		}
		if line, ok := oneLine(ev.data); ok && inspect(line).id == id {
			return line, nil
		}
	}
}

// recordExchange writes the http_exchange record of one request (seed 002:
// "the request method, endpoint path, status, session identifier when
// present, and whether the response contained JSON or began an event
// stream").
func (b *bridge) recordExchange(req *http.Request, resp *http.Response, err error, start time.Time, sent, got int64, msg message, session string) {
	fields := []ledger.Field{ledger.F("http_method", req.Method), ledger.F("path", req.URL.Path)}
	if msg.method != "" {
		fields = append(fields, ledger.F("method", msg.method))
	}
	if len(msg.rawID) > 0 {
		fields = append(fields, ledger.F("request_id", string(msg.rawID)))
	}
	if resp != nil {
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		body := map[string]string{"application/json": "json", "text/event-stream": "event_stream", "": "none"}[ctype]
		if body == "" {
			body = ctype
		}
		fields = append(fields, ledger.F("status", resp.StatusCode), ledger.F("body", body))
		if got > 0 {
			fields = append(fields, ledger.F("response_bytes", got))
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && sid != session {
			fields = append(fields, ledger.F("new_session", digest(sid)))
		}
	} else if err != nil {
		fields = append(fields, ledger.F("error_class", errClass(err)), ledger.F("error", b.scrub(err.Error())))
	}
	if sent > 0 {
		fields = append(fields, ledger.F("request_bytes", sent))
	}
	if session != "" {
		fields = append(fields, ledger.F("session", digest(session)))
	}
	fields = append(fields, ledger.F("latency_ms", time.Since(start)))
	b.emit(phases.Transport, phases.HTTPExchange, fields...)
}

// digest names a session id without revealing it: the id is a bearer of the
// session.
func digest(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

func drain(resp *http.Response) {
	if resp != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
}

// bodyExcerpt is the start of an error body, for the error's data.
func bodyExcerpt(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return strings.ToValidUTF8(strings.TrimSpace(string(b)), "?")
}
