package remote

// The legacy session: re-initialized at once when the server forgot it,
// and its GET stream for the server's own messages.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/sse"
)

// reinitialize replays the client's initialize after the server forgot the
// session old (status and the SessionMiss rule that said so), unless a
// concurrent request already did. It reports whether a session is in place
// to re-send into; a 401 or 403 to the replay that signing in did not get
// past is returned as it is (the server answered: no outage).
func (b *bridge) reinitialize(old string, status int, rule string) (bool, *deniedError) {
	b.reinit.Lock()
	defer b.reinit.Unlock()
	b.mu.Lock()
	current, initLine := b.session, b.initLine
	b.mu.Unlock()
	if current != old {
		return current != "", nil // another request re-initialized meanwhile
	}
	if initLine == nil {
		return false, nil
	}
	start := time.Now()
	b.endRun(fmt.Sprintf("the server forgot the session (HTTP %d)", status), false)
	if ok, _ := b.connect(); !ok {
		return false, nil
	}
	class, err := b.replay()
	if err != nil {
		b.emit(phases.Supervision, phases.ReplayFailed, ledger.F(phases.FieldError, b.scrub(describeStatus(0, err))), ledger.F("class", class.String()))
		var de *deniedError
		errors.As(err, &de)
		return false, de
	}
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	b.emit(phases.Supervision, phases.SessionReinitialized, ledger.F("old_session", digest(old)), ledger.F("new_session", digest(session)),
		ledger.F(phases.FieldStatus, status), ledger.F("rule", rule), ledger.F(phases.FieldDurationMS, time.Since(start)), ledger.F(phases.FieldFailures, b.failures()))
	b.say("the server forgot the session (HTTP %d); re-initialized at once", status)
	b.startGET()
	return true, nil
}

// replay sends the client's initialize under the shim's own id, with no
// session, takes the new session, sends notifications/initialized, and
// restores what the old session had (restore.go): the server sees the
// client it knew. No answer reaches the client.
func (b *bridge) replay() (Class, error) {
	b.mu.Lock()
	initLine, initialized := b.initLine, b.initialized
	b.mu.Unlock()
	answer, header, class, err := b.ownRequest("reinit", initLine, "")
	if err != nil {
		return class, err
	}
	am := inspect(answer)
	if !am.isResult() {
		return Unreachable, fmt.Errorf("the server refused the replayed initialize: %s", redact.Preview(answer, 200))
	}
	b.mu.Lock()
	b.session = header.Get("Mcp-Session-Id")
	if v := am.negotiated(); v != "" {
		b.version = v
	}
	session := b.session
	b.mu.Unlock()
	b.emit(phases.Supervision, phases.HandshakeReplayed, ledger.F(phases.FieldRequestID, string(am.rawID)), ledger.F("new_session", digest(session)))
	if initialized == nil {
		initialized = []byte(`{"jsonrpc":"2.0","method":"` + mcp.NotificationInitialized + `"}`)
	}
	nresp, ndl, err := b.post(b.ctx, initialized, inspect(initialized), session)
	if nresp != nil {
		drain(nresp)
	}
	ndl.stop()
	if err != nil {
		return Unreachable, err
	}
	b.restore(session, am.result)
	return Answered, nil
}

// ownRequest sends a line of the client's under the shim's own id
// ("mcpshim-KIND-N") in session and returns the server's answer and the
// response's headers. The answer never reaches the client: it is read from
// the POST's body, or, in the old transport, caught on the stream.
func (b *bridge) ownRequest(kind string, clientLine []byte, session string) ([]byte, http.Header, Class, error) {
	id := fmt.Sprintf("mcpshim-%s-%d", kind, b.ownSeq.Add(1))
	line, err := withID(clientLine, id)
	if err != nil {
		return nil, nil, Unreachable, fmt.Errorf("the client's %s: %w", kind, err)
	}
	var wait chan []byte
	if b.legacyEndpoint() != nil {
		wait = make(chan []byte, 1)
		b.mu.Lock()
		b.own[stringID(id)] = wait
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.own, stringID(id))
			b.mu.Unlock()
		}()
	}
	var resp *http.Response
	var dl *deadline
	for tries := 0; ; tries++ {
		resp, dl, err = b.post(b.ctx, line, inspect(line), session)
		if resp == nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			break
		}
		drain(resp)
		dl.stop()
		if de := b.denied(b.ctx, resp, tries); de != nil {
			return nil, nil, Denied, de
		}
	}
	defer dl.stop()
	status := 0
	if resp != nil {
		status = resp.StatusCode
		defer resp.Body.Close()
	}
	if c := Classify(status, nil, err, false); c != Answered || status/100 != 2 {
		if err == nil {
			err = fmt.Errorf("HTTP %d", status)
		}
		return nil, nil, c, err
	}
	var answer []byte
	if wait != nil {
		select {
		case answer = <-wait:
		case <-time.After(b.cfg.Timeout):
			err = fmt.Errorf("no answer on the event stream within %v", b.cfg.Timeout)
		case <-b.ctx.Done():
			err = b.ctx.Err()
		}
	} else {
		answer, err = readAnswer(resp, stringID(id), b.cfg.MaxMessage)
	}
	if err != nil {
		return nil, nil, Unreachable, err
	}
	return answer, resp.Header, Answered, nil
}

// startGET opens the legacy GET stream for the server's own messages, once
// per session: "The client MAY issue an HTTP GET to the MCP endpoint." A 405
// says the server offers none. A stream that ends is resumed with
// Last-Event-ID.
func (b *bridge) startGET() {
	b.mu.Lock()
	session, version := b.session, b.version
	if session == "" || mcp.IsModern(version) || (b.getCancel != nil && b.getSession == session) {
		b.mu.Unlock()
		return
	}
	if b.getCancel != nil {
		b.getCancel() // the stream of a session that is gone
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.getCancel, b.getSession = cancel, session
	b.mu.Unlock()
	b.goBG(func() { b.getStream(ctx, session) })
}

// getStream exits when the server refuses the stream for good (405, a 4xx,
// a redirect, no event stream), forgot the session, the session changes, or
// the bridge stops; then the next session may open its own. A failure time
// may fix (refused, reset, a 5xx or 429, a stream that ends before its first
// event) is asked again after the reconnect policy's backoff or
// the server's Retry-After: a server restarting behind a proxy ends streams
// for a while, and the stream gave up after three such tries until the next
// session. It pages nobody and fails no request: the requests' own exchanges
// find an outage.
func (b *bridge) getStream(ctx context.Context, session string) {
	defer func() {
		b.mu.Lock()
		if b.getSession == session {
			b.getCancel, b.getSession = nil, ""
		}
		b.mu.Unlock()
	}()
	p := b.cfg.Policy
	p.GiveUpAfter = 0 // the delays only: ending the bridge is the requests' call
	rc := NewReconnector(p)
	lastID, authTries := "", 0
	var retry time.Duration // the stream's retry field, once it sent one
	for ctx.Err() == nil && b.sessionIs(session) {
		hctx, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(b.cfg.Timeout, cancel) // runs once, if the headers take longer than Timeout
		req, _ := http.NewRequestWithContext(hctx, http.MethodGet, b.cfg.URL.String(), nil)
		b.setHeaders(req, message{}, session)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		start := time.Now()
		resp, err := b.http.Do(req)
		timer.Stop()
		b.recordExchange(req, resp, err, start, 0, 0, message{}, session)
		var wait time.Duration
		switch {
		case err != nil:
			cancel()
			wait = rc.Next(time.Now(), Unreachable, false, 0).Delay
		case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && authTries < maxAuthTries:
			// An expired token: refreshed (or signed in again), then the
			// stream is asked for again at once.
			drain(resp)
			cancel()
			if b.denied(ctx, resp, authTries) != nil {
				return
			}
			authTries++
			continue
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			drain(resp)
			cancel()
			wait = rc.Next(time.Now(), Unreachable, false, retryAfter(resp, time.Now())).Delay
		case resp.StatusCode != http.StatusOK || !isEventStream(resp):
			rule := ""
			if resp.StatusCode == 400 || resp.StatusCode == 404 {
				rule = SessionMiss(resp.StatusCode, peekBody(resp, 4096))
			}
			drain(resp)
			cancel()
			if rule != "" {
				// A refused GET stream after a restart: the server forgot the
				// session before any request found out. No request to re-send.
				b.reinitialize(session, resp.StatusCode, rule)
			}
			return
		default:
			stream := sse.NewReader(resp.Body, b.cfg.MaxMessage)
			events := b.readGET(stream, resp)
			cancel()
			lastID = stream.LastID
			if stream.Retry > 0 {
				retry = stream.Retry
			}
			if events > 0 {
				// A stream that worked and ended: resumed after its retry
				// field, else a second.
				rc.Next(time.Now(), Answered, false, 0)
				wait = cmp.Or(retry, time.Second)
				break
			}
			wait = rc.Next(time.Now(), Unreachable, false, 0).Delay
		}
		wait = max(wait, streamRetry(retry))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// readGET passes on the events of one GET stream until it ends, and
// returns how many there were.
func (b *bridge) readGET(stream *sse.Reader, resp *http.Response) int {
	defer resp.Body.Close()
	n := 0
	for {
		d, err := stream.NextData()
		if err == nil {
			err = b.deliver(d, func() { resp.Body.Close() })
		}
		if err != nil {
			if err == errTooLarge {
				b.emit(phases.Transport, phases.MessageTooLarge, ledger.F(phases.FieldHTTPMethod, "GET"), ledger.F("max_bytes", b.cfg.MaxMessage))
			}
			return n
		}
		n++
	}
}

// sessionIs reports whether session is still the bridge's.
func (b *bridge) sessionIs(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session == session
}

func isEventStream(resp *http.Response) bool {
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return ctype == "text/event-stream"
}
