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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/sse"
)

// send posts one client message and handles what comes back, following the
// policy. resent marks the one re-send after a re-initialization.
func (b *bridge) send(ctx context.Context, line []byte, msg message, resent bool) {
	b.sendTry(ctx, line, msg, resent, 0)
}

// sendTry is send after authTries sign-ins for this message (auth.go).
func (b *bridge) sendTry(ctx context.Context, line []byte, msg message, resent bool, authTries int) {
	if err := b.ensureLegacy(); err != nil {
		if de := (*deniedError)(nil); errors.As(err, &de) {
			b.authFailed(msg, de)
			return
		}
		d := b.judge(Unreachable, false, b.scrub(err.Error()), 0)
		b.failed(msg, d, fmt.Sprintf("mcpshim: server %s: %s (%s)", b.cfg.Name, d.Reason, b.scrub(err.Error())), map[string]any{"url": b.endpoint()})
		return
	}
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	resp, dl, err := b.post(ctx, line, msg, session)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Cancelled by an outage (already answered) or because the bridge is
		// stopping: no verdict on the server.
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the request was cut off", b.cfg.Name))
		return
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
		if b.cfg.Auth != nil && status != http.StatusUnauthorized && status != http.StatusForbidden {
			b.cfg.Auth.Accepted(resp.Request.Header.Get("Authorization")) // the sign-in's token is taken (auth.go)
		}
	}
	if status/100 == 3 {
		dl.stop()
		b.refuseRedirect(resp, msg)
		return
	}
	if b.fallsBack(msg, status, session) {
		drain(resp)
		dl.stop()
		if err := b.openLegacy(); err == nil {
			b.emit(phases.Transport, phases.TransportFallback, ledger.F(phases.FieldStatus, status), ledger.F("from", "streamable-http"), ledger.F(phases.FieldTo, legacyName))
			b.say("the server answered HTTP %d to a Streamable HTTP initialize and speaks the 2024-11-05 HTTP+SSE transport; using it", status)
			b.send(ctx, line, msg, resent)
			return
		}
		// Neither transport: the 4xx is judged as it is.
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		// A 401 or 403 proves the server never ran the request: the bearer
		// check comes before any handler. The request waits for the sign-in
		// with no deadline of its own (auth.go bounds it).
		body := bodyExcerpt(resp)
		drain(resp)
		dl.stop()
		if err := b.denied(ctx, resp, authTries); err != nil {
			err.body = body
			b.authFailed(msg, err)
			return
		}
		b.sendTry(ctx, line, msg, resent, authTries+1)
		return
	}
	if status/100 == 2 && b.legacyEndpoint() != nil {
		drain(resp) // 202 Accepted: the answer comes on the event stream
		dl.stop()
		b.awaitStream(ctx, msg)
		return
	}
	var head []byte
	if session != "" && (status == 400 || status == 404) {
		head = peekBody(resp, 4096) // a forgotten session is told by its body
	}
	class := Classify(status, head, err, session != "")
	d := b.judge(class, resent, describeStatus(status, err), retryAfter(resp, time.Now()))
	switch d.Action {
	case Deliver:
		b.deliverBody(ctx, resp, dl, msg, session)
		return
	case Reinitialize:
		drain(resp)
		dl.stop()
		rule := SessionMiss(status, head)
		ok, de := b.reinitialize(session, status, rule)
		if de != nil {
			b.authFailed(msg, de)
			return
		}
		if ok {
			b.emit(phases.Supervision, phases.ResentAfterReinit, ledger.F(phases.FieldRequestID, string(msg.rawID)), ledger.F(phases.FieldMethod, msg.method),
				ledger.F(phases.FieldTool, msg.name), ledger.F(phases.FieldStatus, status), ledger.F("rule", rule), ledger.F("old_session", digest(session)))
			b.observe(phases.FromClient, line, false) // the new run sees the request it is sent
			b.send(ctx, line, msg, true)
			return
		}
		// The server forgot the session and will not take a new one: that
		// counts, or a dead server would be re-initialized forever.
		d = b.judge(Unreachable, false, "the session could not be re-initialized", 0)
	}
	text, data := b.failureText(class, status, resp, err, d)
	dl.stop()
	b.failed(msg, d, text, data)
}

// deadline bounds one exchange: it cancels the request when Timeout passes
// without a rearm. A JSON body gets one Timeout from the request's start to
// its last byte (a body trickling a byte a second is cut); a request's event
// stream gets one per event (rearm after each), so a long stream lives while
// its events come.
type deadline struct {
	ctx    context.Context // the request's: ends with the deadline, and with the call
	timer  *time.Timer
	d      time.Duration
	cancel context.CancelFunc
	fired  atomic.Bool // the request was cut by this deadline, not by a failure
	open   bool        // a stream the spec keeps open: no deadline once its headers came
}

func (d *deadline) rearm() {
	if !d.open {
		d.timer.Reset(d.d)
	}
}

// stop ends the deadline and the request's context: after the body is read.
func (d *deadline) stop() { d.timer.Stop(); d.cancel() }

// post sends one message under a deadline the caller stops once the body
// is read.
func (b *bridge) post(ctx context.Context, line []byte, msg message, session string) (*http.Response, *deadline, error) {
	rctx, cancel := context.WithCancel(ctx)
	dl := &deadline{ctx: rctx, d: b.cfg.Timeout, cancel: cancel}
	// Runs once, when the deadline passes without a rearm or a stop.
	dl.timer = time.AfterFunc(b.cfg.Timeout, func() { dl.fired.Store(true); cancel() })
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, b.postURL(), bytes.NewReader(line))
	if err != nil {
		dl.stop()
		return nil, dl, err
	}
	b.setHeaders(req, msg, session)
	if msg.method == mcp.MethodCallTool && msg.name != "" {
		b.setParamHeaders(req, line, msg.name)
	}
	start := time.Now()
	resp, err := b.http.Do(req)
	if err != nil && dl.fired.Load() {
		err = fmt.Errorf("%w after %v", context.DeadlineExceeded, b.cfg.Timeout)
	}
	var respBytes int64
	if resp != nil {
		respBytes = resp.ContentLength
	}
	b.recordExchange(req, resp, err, start, int64(len(line)), respBytes, msg, session)
	if err != nil {
		dl.stop()
		return nil, dl, err
	}
	if keptOpen(msg) {
		// The headers came: a listen stream may be silent for as long as it
		// likes, its events re-arm nothing.
		dl.open = true
		dl.timer.Stop()
	}
	return resp, dl, nil
}

// keptOpen reports whether a request's stream has no request deadline.
// subscriptions/listen: "Unlike one-off requests, the stream stays open and
// delivers notifications until the client cancels it."
func keptOpen(msg message) bool { return msg.method == mcp.MethodListen }

// readBody reads a JSON body whole, up to max bytes (after any
// decompression: the transport inflates gzip as it reads). A body of known
// length is read into one buffer of its size; another grows as append does
// (by a quarter when large), not doubling: a 64 MiB body costs 64 MiB and a
// part, not 128.
func readBody(resp *http.Response, max int64) ([]byte, error) {
	r := io.LimitReader(resp.Body, max+1)
	if n := resp.ContentLength; n > 0 && n <= max {
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, errTooLarge
	}
	return body, nil
}

func (b *bridge) setHeaders(req *http.Request, msg message, session string) {
	for _, h := range b.cfg.Headers {
		if h.Name == "Idempotency-Key" || h.Name == "X-Idempotency-Key" {
			// Under its canonical name, this header makes net/http re-send a
			// POST by itself when a kept-alive connection drops after the
			// request went out (Request.isReplayable): the server ran the
			// tool twice. A lower-case key goes on the wire the same (names
			// are case-insensitive) and is not seen.
			req.Header[strings.ToLower(h.Name)] = []string{h.Value}
			continue
		}
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
	if msg.version != "" && msg.method != mcp.MethodInitialize {
		version = msg.version // 2026-07-28: each request names its own
	}
	if version != "" && msg.method != mcp.MethodInitialize {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if mcp.IsModern(version) && msg.isRequest() {
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
// drainWait and drainMax bound drainEnd.
const (
	drainWait = 50 * time.Millisecond
	drainMax  = 64 << 10
)

// drainEnd reads a stream to its end after the answer it was opened for,
// when that end comes within drainWait and drainMax: the transport spec says
// that the server SHOULD close it then, and a body closed before its end
// takes its connection with it, so every call dialled a new one (80 µs of the
// bridge's CPU a call, and a socket left in TIME_WAIT). What is read is
// dropped, as it was when the stream was closed at once.
func drainEnd(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { body.Close() }) // unblocks the read
	io.Copy(io.Discard, io.LimitReader(body, drainMax))
	t.Stop()
}

func (b *bridge) deliverBody(ctx context.Context, resp *http.Response, dl *deadline, msg message, session string) {
	defer dl.stop()
	defer resp.Body.Close()
	if msg.method == mcp.MethodInitialize && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			b.mu.Lock()
			b.session = sid
			b.mu.Unlock()
		}
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ctype == "text/event-stream":
		events := sse.NewReader(resp.Body, b.cfg.MaxMessage)
		stream := resp.Body
		resumed := false
		for {
			d, err := events.NextData()
			if err == nil {
				dl.rearm()              // one Timeout for each event, from its first line
				err = b.deliver(d, nil) // the request's deadline bounds it
			}
			if err != nil && err != errTooLarge && !dl.fired.Load() && ctx.Err() == nil && !resumed && events.LastID != "" {
				// The transport spec: a client "MAY poll the server" with a GET
				// and Last-Event-ID to resume a stream that ended early, after
				// the stream's retry time: "the client MUST respect the retry
				// field, waiting the given number of milliseconds". The wait,
				// the GET and the silence until the next event are one gap
				// between two events, under the request's deadline: not
				// re-armed, and the GET is the request's.
				resumed = true
				if r := b.resume(dl.ctx, session, events.LastID, events.Retry); r != nil {
					defer r.Close()
					retry := events.Retry
					events, stream = sse.NewReader(r, b.cfg.MaxMessage), r
					events.Retry = retry
					continue
				}
			}
			if err != nil {
				b.brokeOff(ctx, msg, err, dl)
				return
			}
			dl.rearm()
			if b.answered(msg) {
				drainEnd(stream)
				return
			}
		}
	case ctype == "application/json" && resp.StatusCode/100 == 2:
		if err := b.deliver(capped(resp.Body, b.cfg.MaxMessage), nil); err != nil {
			b.brokeOff(ctx, msg, err, dl)
			return
		}
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered without a response to this request", b.cfg.Name))
	case ctype == "application/json":
		// An error status. Its body may hold the JSON-RPC error that answers
		// the request, which is small: it is read up to the hold an answer is
		// judged whole within, never to --max-message (eight 100 MiB bodies
		// at once took 814 MiB).
		body, err := readBody(resp, holdSize)
		if err == errTooLarge {
			b.emit(phases.Transport, phases.MessageTooLarge, ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldRequestID, string(msg.rawID)),
				ledger.F(phases.FieldStatus, resp.StatusCode), ledger.F("max_bytes", holdSize))
			b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered HTTP %d with a body over %d bytes; not read", b.cfg.Name, resp.StatusCode, holdSize))
			return
		}
		if err != nil {
			b.brokeOff(ctx, msg, err, dl)
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			b.fromServer(body)
		}
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered HTTP %d: %s", b.cfg.Name, resp.StatusCode, b.scrub(redact.Preview(bytes.TrimSpace(body), 300))))
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode/100 == 2 && !hasRequest(msg) {
			// 202 Accepted for a notification or an answer
			if msg.method == mcp.NotificationInitialized {
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
func (b *bridge) brokeOff(ctx context.Context, msg message, err error, dl *deadline) {
	switch {
	case ctx.Err() != nil:
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the request was cut off", b.cfg.Name))
		return
	case dl.fired.Load():
		// Only this request: the server is there, it is slow on this one.
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: no answer within the request timeout (--request-timeout %v); not re-sent, as it may have run", b.cfg.Name, b.cfg.Timeout))
		return
	case err == errTooLarge:
		b.emit(phases.Transport, phases.MessageTooLarge, ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldRequestID, string(msg.rawID)), ledger.F("max_bytes", b.cfg.MaxMessage))
		b.say("an answer to %s is over --max-message (%d bytes); its request gets an error", msg.method, b.cfg.MaxMessage)
		b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: the answer is over --max-message (%d bytes); not re-sent, as it may have run", b.cfg.Name, b.cfg.MaxMessage))
		return
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the stream ended before the answer
	}
	// The server answered this request's headers: a stream cut after them
	// fails this request alone. Only a failed connection is an outage; a
	// server that died meets the next request with one.
	why := "the answer broke off"
	if d := describeErr(err); d != why {
		why += " (" + d + ")"
	}
	text := fmt.Sprintf("mcpshim: server %s: %s; not re-sent, as it may have run", b.cfg.Name, why)
	msg.each(func(m message) {
		if m.isRequest() {
			b.fail(m.id, text, map[string]any{"url": b.endpoint()})
		}
	})
}

// resume opens a GET with Last-Event-ID for the rest of a request's stream;
// nil when the server offers none.
func (b *bridge) resume(ctx context.Context, session, lastID string, wait time.Duration) io.ReadCloser {
	t := time.NewTimer(streamRetry(wait))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
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
func readAnswer(resp *http.Response, id idKey, max int64) ([]byte, error) {
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ctype != "text/event-stream" {
		body, err := readBody(resp, max)
		if err != nil {
			return nil, err
		}
		line, ok := oneLine(body)
		if !ok {
			return nil, fmt.Errorf("the answer is not JSON (%s)", ctype)
		}
		return line, nil
	}
	events := sse.NewReader(resp.Body, max)
	for {
		ev, err := events.Next()
		if err != nil {
			return nil, fmt.Errorf("the event stream ended before the answer: %w", err)
		}
		if line, ok := oneLine(ev.Data); ok && inspect(line).id == id {
			return line, nil
		}
	}
}

// recordExchange writes the http_exchange record of one request: the request
// method, endpoint path, status, session identifier when present, and
// whether the response contained JSON or began an event stream, as HTTP
// evidence kept apart from MCP state.
func (b *bridge) recordExchange(req *http.Request, resp *http.Response, err error, start time.Time, sent, got int64, msg message, session string) {
	fields := []ledger.Field{ledger.F(phases.FieldHTTPMethod, req.Method), ledger.F("path", req.URL.Path)}
	if msg.method != "" {
		fields = append(fields, ledger.F(phases.FieldMethod, msg.method))
	}
	if len(msg.rawID) > 0 {
		fields = append(fields, ledger.F(phases.FieldRequestID, string(msg.rawID)))
	}
	if resp != nil {
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		body := map[string]string{"application/json": "json", "text/event-stream": "event_stream", "": "none"}[ctype]
		if body == "" {
			body = ctype
		}
		fields = append(fields, ledger.F(phases.FieldStatus, resp.StatusCode), ledger.F("body", body))
		if resp.StatusCode/100 == 3 {
			fields = append(fields, ledger.F(phases.FieldLocation, location(resp, false)))
		}
		if got > 0 {
			fields = append(fields, ledger.F("response_bytes", got))
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && sid != session {
			fields = append(fields, ledger.F("new_session", digest(sid)))
		}
	} else if err != nil {
		fields = append(fields, ledger.F(phases.FieldErrorClass, errClass(err)), ledger.F(phases.FieldError, b.scrub(errText(err))))
	}
	if sent > 0 {
		fields = append(fields, ledger.F("request_bytes", sent))
	}
	if session != "" {
		fields = append(fields, ledger.F("session", digest(session)))
	}
	fields = append(fields, ledger.F(phases.FieldLatencyMS, time.Since(start)))
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

// retryAfter is the Retry-After of a 429 or 503 (RFC 9110 §10.2.3: seconds,
// or an HTTP date), 0 when there is none.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return 0
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// errTooLarge is a message past the bridge's cap (--max-message), in a JSON
// body or an event.
var errTooLarge = sse.ErrTooLarge

// capReader ends a message at the cap: the byte past it is errTooLarge.
type capReader struct {
	r    io.Reader
	left int64
}

func capped(r io.Reader, max int64) io.Reader { return &capReader{r: r, left: max} }

func (c *capReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.left <= 0 {
		n, err := c.r.Read(p[:1])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// peekBody reads up to n bytes of resp's body and puts them back in front
// of the rest, for a decision that depends on the body.
func peekBody(resp *http.Response, n int64) []byte {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, n))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return head
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
