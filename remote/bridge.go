// Package remote is the bridge between a stdio MCP client and a server
// over Streamable HTTP (`mcpshim --url`): each client line is POSTed as the
// body, each answer reaches the client as one line, the exchanges are
// recorded in the same phase ledger as a child process's, and the failures
// of a remote session get seed 004's reconnect policy.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// ExitUnavailable is EX_UNAVAILABLE: the shim gave up on the server.
const ExitUnavailable = 69

// Config is everything one bridge needs.
type Config struct {
	Name    string
	URL     *url.URL
	Headers []Header

	Recorder  *phases.Recorder
	ClientIn  io.Reader // the client's messages, one per line
	ClientOut io.Writer // the wire back: only the server's messages and the errors the shim owes

	Policy Policy
	// Timeout bounds every HTTP request: connecting, the response headers, a
	// JSON body, and the silence between two events of a request's stream.
	// The GET stream and subscriptions/listen may stay silent longer.
	Timeout time.Duration
	// Grace is how long requests in flight may still be answered after the
	// client left, before the session is deleted.
	Grace      time.Duration
	Signals    <-chan os.Signal
	MaxObserve int
}

// legacyStream names the protocol versions with sessions and a GET stream:
// every version before 2026-07-28.
func modern(version string) bool { return version >= "2026-07-28" }

type bridge struct {
	cfg  Config
	http *http.Client
	wire *jsonrpc.Wire // the client's stdout
	rec  *phases.Recorder

	ctx    context.Context // ends when the bridge stops
	stop   context.CancelFunc
	posts  sync.WaitGroup // request goroutines in flight
	ownSeq atomic.Int64

	// reinit serializes re-initializations: requests that meet the same 404
	// together wait for one.
	reinit sync.Mutex

	mu          sync.Mutex
	session     string // Mcp-Session-Id; "" in the modern era
	version     string // the negotiated protocol version (legacy), for MCP-Protocol-Version
	initLine    []byte // the client's initialize, replayed under the shim's own id
	initialized []byte // the client's notifications/initialized
	pending     map[idKey]*call
	down        bool // between an outage and a reconnect: requests are answered at once
	downReason  string
	recon       *Reconnector
	run         string
	gen         int
	addr        string             // the server's resolved address
	runOpen     bool               // connected was written and disconnected not yet
	getCancel   context.CancelFunc // the GET stream's, for getSession
	getSession  string

	outage   chan Decision // to the loop: reconnect or give up
	gone     chan struct{} // closed when writing to the client failed
	goneOnce sync.Once
}

// call is a client request waiting for its answer.
type call struct {
	rawID  []byte
	method string
	tool   string
	cancel context.CancelFunc
}

// Run bridges until the client leaves (exit 0) or the policy gives up on the
// server (exit 69).
func Run(ctx context.Context, cfg Config) int {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	if cfg.MaxObserve <= 0 {
		cfg.MaxObserve = jsonrpc.DefaultMaxObserve
	}
	bctx, stop := context.WithCancel(context.Background())
	b := &bridge{
		cfg: cfg,
		// A transport of its own; no proxy, as MCP clients use none by default.
		http: &http.Client{Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   8,
			ForceAttemptHTTP2:     true,
		}},
		wire:    jsonrpc.NewWire(cfg.ClientOut),
		rec:     cfg.Recorder,
		ctx:     bctx,
		stop:    stop,
		pending: map[idKey]*call{},
		recon:   NewReconnector(cfg.Policy),
		outage:  make(chan Decision, 1),
		gone:    make(chan struct{}),
	}
	defer stop()
	return b.loop(ctx)
}

func (b *bridge) emit(p phases.Phase, event string, fields ...phases.Field) {
	b.mu.Lock()
	run := b.run
	b.mu.Unlock()
	b.rec.Emit(phases.Record{Time: time.Now(), Run: run, Phase: p, Event: event, Fields: fields})
}

func (b *bridge) say(format string, args ...any) {
	b.rec.Say(b.scrub(fmt.Sprintf("mcpshim %s: "+format+"\n", append([]any{b.cfg.Name}, args...)...)))
}

// scrub hides header values and anything secret-shaped in text bound for a
// log or the ledger: a server may echo a credential back in an error.
func (b *bridge) scrub(s string) string {
	for _, h := range b.cfg.Headers {
		if len(h.Value) >= 4 {
			s = strings.ReplaceAll(s, h.Value, phases.Redacted)
		}
	}
	// Nothing a server wrote may drive the reader's terminal.
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' {
			return '?'
		}
		return r
	}, phases.Redact(s))
}

// endpoint is the URL as the ledger shows it: no query, no user info.
func (b *bridge) endpoint() string {
	u := *b.cfg.URL
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func (b *bridge) loop(ctx context.Context) int {
	clientDone := make(chan error, 1)
	if !b.connect() {
		b.scheduleFailure("cannot connect")
	}
	// The client reader lives as long as the client's stdin: a blocking read
	// of stdin cannot be interrupted, so it exits at EOF or with the process.
	go func() { clientDone <- b.readClient() }()
	var retry <-chan time.Time
	for {
		select {
		case d := <-b.outage:
			if d.Action == GiveUp {
				b.giveUp(d)
				return ExitUnavailable
			}
			b.emit(phases.Supervision, phases.ReconnectScheduled, phases.F("failures", d.Failures), phases.F("of", b.cfg.Policy.MaxRetries+1),
				phases.F("delay_ms", d.Delay), phases.F("reason", d.Reason))
			b.say("%s; retry in %v (failure %d of %d)", b.reasonNow(d.Reason), d.Delay.Round(time.Millisecond), d.Failures, b.cfg.Policy.MaxRetries+1)
			retry = time.After(d.Delay)
		case <-retry:
			retry = nil
			go b.attempt()
		case err := <-clientDone:
			reason := "stdin_eof"
			if err != nil {
				reason = "stdin_error: " + err.Error()
			}
			b.leave(reason)
			return 0
		case <-b.gone:
			b.leave("stdout_closed")
			return 0
		case sig := <-b.cfg.Signals:
			b.emit(phases.Interruption, phases.SignalReceived, phases.F("signal", sig.String()), phases.F("forwarded", false))
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				b.leave("signal")
				return 0
			}
		case <-ctx.Done():
			b.leave("shim stopping")
			return 0
		}
	}
}

func (b *bridge) reasonNow(reason string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.downReason != "" {
		return reason + " (" + b.downReason + ")"
	}
	return reason
}

// leave ends the session when the client is gone: requests in flight get
// Grace to be answered, then the legacy session is deleted.
func (b *bridge) leave(reason string) {
	b.emit(phases.Interruption, phases.ClientDisconnected, phases.F("reason", reason))
	done := make(chan struct{})
	go func() { b.posts.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(b.cfg.Grace):
	}
	b.stop()
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	if session != "" {
		// The transport spec: clients "SHOULD send an HTTP DELETE to the MCP
		// endpoint with the Mcp-Session-Id header" when they leave.
		ctx, cancel := context.WithTimeout(context.Background(), min(b.cfg.Timeout, 2*time.Second))
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, b.cfg.URL.String(), nil)
		b.setHeaders(req, message{}, session)
		start := time.Now()
		resp, err := b.http.Do(req)
		b.recordExchange(req, resp, err, start, 0, 0, message{}, session)
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
	}
	for _, c := range b.takeAll() {
		b.answer(c, "mcpshim: the client left before the server answered", nil)
	}
	b.endRun(reason, false)
}

func (b *bridge) giveUp(d Decision) {
	b.emit(phases.Supervision, phases.ReconnectsExhausted, phases.F("failures", d.Failures), phases.F("reason", b.reasonNow(d.Reason)))
	b.say("giving up: %s", b.reasonNow(d.Reason))
	for _, c := range b.takeAll() {
		b.answer(c, fmt.Sprintf("mcpshim: gave up on server %s: %s", b.cfg.Name, d.Reason), nil)
	}
	b.endRun("gave up: "+d.Reason, true)
}

// clientGone tells the loop that writing to the client failed: nobody is
// listening any more.
func (b *bridge) clientGone() {
	b.goneOnce.Do(func() { close(b.gone) })
}

// endRun writes disconnected for the current run once: the client left, the
// server forgot the session, or it became unreachable (failed).
func (b *bridge) endRun(reason string, failed bool) {
	b.mu.Lock()
	open := b.runOpen
	b.runOpen = false
	b.mu.Unlock()
	if !open {
		return
	}
	fields := []phases.Field{phases.F("reason", reason)}
	if failed {
		fields = append(fields, phases.F("exit_code", ExitUnavailable))
	}
	b.emit(phases.Launch, phases.Disconnected, fields...)
}

// connect starts a run: it resolves and dials the server (and completes TLS
// for https) to record where the run goes, then writes connected, or
// connect_failed and returns false.
func (b *bridge) connect() bool {
	u := b.cfg.URL
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	dialer := &net.Dialer{Timeout: b.cfg.Timeout}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.Timeout)
	defer cancel()
	start := time.Now()
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	b.mu.Lock()
	b.gen++
	gen := b.gen
	prev := b.run
	b.run = phases.NewID("run", start)
	b.mu.Unlock()
	fields := []phases.Field{phases.F("url", b.endpoint()), phases.F("transport", "streamable-http"),
		phases.F("header_names", headerNames(b.cfg.Headers)), phases.F("generation", gen)}
	if prev != "" {
		fields = append(fields, phases.F("previous_run", prev))
	}
	if err != nil {
		b.setDown(describeErr(err))
		b.emit(phases.Launch, phases.ConnectFailed, append(fields, phases.F("error_class", errClass(err)), phases.F("error", b.scrub(err.Error())))...)
		return false
	}
	addr := conn.RemoteAddr().String()
	fields = append(fields, phases.F("address", addr), phases.F("connect_ms", time.Since(start)))
	if u.Scheme == "https" {
		tc := tlsClient(conn, host)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			b.setDown(describeErr(err))
			b.emit(phases.Launch, phases.ConnectFailed, append(fields, phases.F("error_class", "tls"), phases.F("error", b.scrub(err.Error())))...)
			return false
		}
		fields = append(fields, tlsFacts(tc.ConnectionState())...)
		conn = tc
	} else {
		fields = append(fields, phases.F("tls", false))
	}
	conn.Close()
	b.mu.Lock()
	b.addr = addr
	b.runOpen = true
	b.mu.Unlock()
	b.emit(phases.Launch, phases.Connected, fields...)
	return true
}

func (b *bridge) failures() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.recon.Failures()
}

func (b *bridge) setDown(reason string) {
	b.mu.Lock()
	b.down, b.downReason = true, reason
	b.mu.Unlock()
}

// scheduleFailure runs the policy for a failure outside a request (the
// first connection, a reconnect attempt) and tells the loop. Whatever the
// exchange was (a refusal, a 401 or a 400 to the replayed initialize), the
// server did not take the session back: it is a failure, and counts.
func (b *bridge) scheduleFailure(reason string) {
	b.mu.Lock()
	d := b.recon.Next(time.Now(), Unreachable, false)
	b.down = true
	b.mu.Unlock()
	if d.Reason == "" {
		d.Reason = reason
	}
	b.outage <- d
}

// attempt is one reconnect after an outage: the client's handshake is
// replayed under the shim's own id when there was one, else the server is
// dialled. It runs on its own goroutine; its result goes back to the loop.
func (b *bridge) attempt() {
	b.mu.Lock()
	initLine, why := b.initLine, b.downReason
	b.mu.Unlock()
	b.endRun("unreachable: "+why, true)
	if !b.connect() {
		b.scheduleFailure("cannot connect")
		return
	}
	if initLine != nil {
		if _, err := b.replay(); err != nil {
			b.setDown(b.scrub(describeErr(err)))
			b.scheduleFailure("the handshake replay failed")
			return
		}
	}
	b.mu.Lock()
	b.recon.Next(time.Now(), Answered, false)
	b.down, b.downReason = false, ""
	b.mu.Unlock()
	b.say("reconnected to %s", b.endpoint())
	b.startGET()
}

// readClient reads the client's lines and sends each on. Notifications and
// answers are posted in order on this goroutine (a server must see
// notifications/initialized before what follows it); requests run
// concurrently, as a client may have many in flight.
func (b *bridge) readClient() error {
	br := bufio.NewReaderSize(b.cfg.ClientIn, readSize)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			b.fromClient(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line whole, without its newline; the last line of a
// stream may have none.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			line = line[:len(line)-1]
		}
		return line, err
	}
}

func (b *bridge) fromClient(line []byte) {
	msg := inspect(line)
	b.observe(phases.FromClient, line)
	if msg.isNoise() || !json.Valid(line) {
		b.emit(phases.Supervision, phases.MessageRejected, phases.F("direction", "client"), phases.F("reason", "not a JSON-RPC message"), phases.F("bytes", len(line)))
		b.say("a client line is not JSON-RPC; not sent (%d bytes)", len(line))
		return
	}
	b.mu.Lock()
	switch msg.method {
	case "initialize":
		b.initLine = append([]byte(nil), line...)
	case "notifications/initialized":
		b.initialized = append([]byte(nil), line...)
	}
	down, reason := b.down, b.downReason
	var calls []*call
	ctx, cancel := context.WithCancel(b.ctx)
	msg.each(func(m message) {
		if m.isRequest() && m.id != "" {
			c := &call{rawID: m.rawID, method: m.method, tool: m.name, cancel: cancel}
			b.pending[m.id] = c
			calls = append(calls, c)
		}
	})
	b.mu.Unlock()
	if down {
		cancel()
		for _, c := range calls {
			b.fail(keyOf(c.rawID), fmt.Sprintf("mcpshim: server %s is unreachable (%s); reconnecting", b.cfg.Name, reason), nil)
		}
		if len(calls) == 0 {
			b.emit(phases.Supervision, phases.MessageRejected, phases.F("method", msg.method), phases.F("reason", "server unreachable"))
		}
		return
	}
	if len(calls) == 0 || msg.method == "initialize" {
		b.send(ctx, line, msg, false)
		cancel()
		return
	}
	b.posts.Add(1)
	go func() {
		defer b.posts.Done()
		defer cancel()
		b.send(ctx, line, msg, false)
	}()
}

// send posts one client message and handles what comes back, following the
// policy. resent marks the one re-send after a re-initialization.
func (b *bridge) send(ctx context.Context, line []byte, msg message, resent bool) {
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
			b.emit(phases.Supervision, phases.ResentAfterReinit, phases.F("request_id", string(msg.rawID)), phases.F("method", msg.method),
				phases.F("tool", msg.name), phases.F("status", status), phases.F("old_session", digest(session)))
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
		fields := []phases.Field{phases.F("status", status), phases.F("www_authenticate", ch)}
		for _, k := range []string{"scheme", "realm", "resource_metadata", "error", "scope"} {
			if c[k] != "" {
				fields = append(fields, phases.F(k, c[k]))
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
			b.failOpen(msg, fmt.Sprintf("mcpshim: server %s answered HTTP %d", b.cfg.Name, resp.StatusCode))
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

func hasRequest(msg message) bool {
	found := false
	msg.each(func(m message) { found = found || m.isRequest() })
	return found
}

// answered reports whether every request of msg has its answer.
func (b *bridge) answered(msg message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	done := true
	msg.each(func(m message) {
		if m.isRequest() && b.pending[m.id] != nil {
			done = false
		}
	})
	return done
}

// failOpen answers the requests of msg that are still open.
func (b *bridge) failOpen(msg message, text string) {
	msg.each(func(m message) {
		if m.isRequest() {
			b.fail(m.id, text, nil)
		}
	})
	if msg.method == "notifications/initialized" {
		b.startGET()
	}
}

// fromServer passes one server message (a JSON body or an event's data) to
// the client as one line. An answer to a request that was already answered
// (by an error the shim owed) is dropped: exactly one answer per request.
func (b *bridge) fromServer(data []byte) {
	line, ok := oneLine(data)
	if !ok {
		b.emit(phases.Transport, phases.StdoutNoise, phases.F("direction", "server"), phases.F("bytes", len(data)),
			phases.F("preview", phases.Preview(data, 120)), phases.F("action", "dropped"))
		b.say("the server sent a body that is not JSON (%d bytes); dropped", len(data))
		return
	}
	msg := inspect(line)
	forward := true
	var late []string
	b.mu.Lock()
	if msg.method == "" && msg.isResponse() || msg.kind == jsonrpc.Batch {
		msg.each(func(m message) {
			if !m.isResponse() {
				return
			}
			if _, ok := b.pending[m.id]; !ok {
				late = append(late, string(m.rawID))
				return
			}
			if b.pending[m.id].method == "initialize" && m.kind == jsonrpc.Response {
				if v := m.negotiated(); v != "" {
					b.version = v
				}
			}
			delete(b.pending, m.id)
		})
		forward = len(late) == 0 || msg.kind == jsonrpc.Batch
	}
	b.mu.Unlock()
	for _, id := range late {
		b.emit(phases.Supervision, phases.LateResponseDropped, phases.F("request_id", id))
	}
	if !forward {
		return
	}
	if _, err := b.wire.WriteMessage(line); err != nil {
		b.clientGone()
		return
	}
	b.observe(phases.FromServer, line)
}

// observe hands a line to the tracker, as the stdio relay does.
func (b *bridge) observe(dir phases.Dir, line []byte) {
	n := min(len(line), b.cfg.MaxObserve)
	data := append([]byte(nil), line[:n]...)
	l := jsonrpc.Line{Data: data, Size: int64(len(line) + 1), Truncated: n < len(line), Forwarded: true, Routed: true, End: time.Now()}
	l.Msg = jsonrpc.Peek(data)
	b.rec.Line(dir, &l)
}

// fail answers the request id with an error, unless it is answered already.
func (b *bridge) fail(id idKey, text string, data map[string]any) {
	b.mu.Lock()
	c := b.pending[id]
	delete(b.pending, id)
	b.mu.Unlock()
	if c != nil {
		b.answer(c, text, data)
	}
}

func (b *bridge) answer(c *call, text string, data map[string]any) {
	if _, err := b.wire.WriteMessage(errorAnswer(c.rawID, text, data)); err != nil {
		b.clientGone()
		return
	}
	fields := []phases.Field{phases.F("request_id", string(c.rawID)), phases.F("method", c.method), phases.F("direction", "client")}
	if c.tool != "" {
		fields = append(fields, phases.F("tool", c.tool))
	}
	b.emit(phases.Interruption, phases.PendingFailed, append(fields, phases.F("message", text))...)
}

func (b *bridge) takeAll() []*call {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*call
	for id, c := range b.pending {
		out = append(out, c)
		delete(b.pending, id)
	}
	return out
}

// failInFlight answers every request in flight and cancels its exchange:
// seed 004, "requests in flight get errors at once".
func (b *bridge) failInFlight(text string) {
	b.mu.Lock()
	if b.getCancel != nil {
		b.getCancel()
		b.getCancel = nil
	}
	b.mu.Unlock()
	for _, c := range b.takeAll() {
		c.cancel()
		b.answer(c, text, nil)
	}
}

// reinitialize replays the client's initialize after a 404 for the session
// old, unless a concurrent request already did. It reports whether a session
// is in place to re-send into.
func (b *bridge) reinitialize(old string) bool {
	b.reinit.Lock()
	defer b.reinit.Unlock()
	b.mu.Lock()
	current, initLine := b.session, b.initLine
	b.mu.Unlock()
	if current != old {
		return current != "" // another request re-initialized meanwhile
	}
	if initLine == nil {
		return false
	}
	start := time.Now()
	b.endRun("the server forgot the session (HTTP 404)", false)
	if !b.connect() {
		return false
	}
	class, err := b.replay()
	if err != nil {
		b.emit(phases.Supervision, phases.ReplayFailed, phases.F("error", b.scrub(describeStatus(0, err))), phases.F("class", class.String()))
		return false
	}
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	b.emit(phases.Supervision, phases.SessionReinitialized, phases.F("old_session", digest(old)), phases.F("new_session", digest(session)),
		phases.F("status", 404), phases.F("duration_ms", time.Since(start)), phases.F("failures", b.failures()))
	b.say("the server forgot the session (HTTP 404); re-initialized at once")
	b.startGET()
	return true
}

// replay sends the client's initialize under the shim's own id, with no
// session, takes the new session, and sends notifications/initialized: the
// server sees the client it knew. The answer never reaches the client.
func (b *bridge) replay() (Class, error) {
	b.mu.Lock()
	initLine, initialized := b.initLine, b.initialized
	b.mu.Unlock()
	id := fmt.Sprintf("mcpshim-reinit-%d", b.ownSeq.Add(1))
	line, err := withID(initLine, id)
	if err != nil {
		return Unreachable, fmt.Errorf("the client's initialize: %w", err)
	}
	msg := inspect(line)
	resp, stop, err := b.post(b.ctx, line, msg, "")
	defer stop()
	status := 0
	if resp != nil {
		status = resp.StatusCode
		defer resp.Body.Close()
	}
	if c := Classify(status, err, false); c != Answered || status/100 != 2 {
		if err == nil {
			err = fmt.Errorf("HTTP %d", status)
		}
		return c, err
	}
	answer, err := readAnswer(resp, keyOf([]byte(`"`+id+`"`)))
	if err != nil {
		return Unreachable, err
	}
	am := inspect(answer)
	if am.kind != jsonrpc.Response {
		return Unreachable, fmt.Errorf("the server refused the replayed initialize: %s", phases.Preview(answer, 200))
	}
	b.mu.Lock()
	b.session = resp.Header.Get("Mcp-Session-Id")
	if v := am.negotiated(); v != "" {
		b.version = v
	}
	session := b.session
	b.mu.Unlock()
	b.emit(phases.Supervision, phases.HandshakeReplayed, phases.F("request_id", id), phases.F("new_session", digest(session)))
	if initialized == nil {
		initialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	nresp, nstop, err := b.post(b.ctx, initialized, inspect(initialized), session)
	if nresp != nil {
		drain(nresp)
	}
	nstop()
	if err != nil {
		return Unreachable, err
	}
	return Answered, nil
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

// startGET opens the legacy GET stream for the server's own messages, once
// per session: "The client MAY issue an HTTP GET to the MCP endpoint." A 405
// says the server offers none. A stream that ends is resumed with
// Last-Event-ID.
func (b *bridge) startGET() {
	b.mu.Lock()
	session, version := b.session, b.version
	if session == "" || modern(version) || (b.getCancel != nil && b.getSession == session) {
		b.mu.Unlock()
		return
	}
	if b.getCancel != nil {
		b.getCancel() // the stream of a session that is gone
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.getCancel, b.getSession = cancel, session
	b.mu.Unlock()
	go b.getStream(ctx, session)
}

// getStream exits when the stream is refused, the session changes, or the
// bridge stops; then the next session may open its own.
func (b *bridge) getStream(ctx context.Context, session string) {
	defer func() {
		b.mu.Lock()
		if b.getSession == session {
			b.getCancel, b.getSession = nil, ""
		}
		b.mu.Unlock()
	}()
	lastID := ""
	for tries := 0; tries < 3 && ctx.Err() == nil; tries++ {
		hctx, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(b.cfg.Timeout, cancel)
		req, _ := http.NewRequestWithContext(hctx, http.MethodGet, b.cfg.URL.String(), nil)
		b.setHeaders(req, message{}, session)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		start := time.Now()
		resp, err := b.http.Do(req)
		timer.Stop()
		b.recordExchange(req, resp, err, start, 0, 0, message{}, session)
		if err != nil {
			cancel()
			return
		}
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || ctype != "text/event-stream" {
			drain(resp)
			cancel()
			return
		}
		sse := newSSEReader(resp.Body)
		for {
			ev, err := sse.next()
			if err != nil {
				break
			}
			tries = 0
			b.fromServer(ev.data)
		}
		lastID = sse.lastID
		resp.Body.Close()
		cancel()
		b.mu.Lock()
		same := b.session == session
		b.mu.Unlock()
		if !same {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// recordExchange writes the http_exchange record of one request (seed 002:
// "the request method, endpoint path, status, session identifier when
// present, and whether the response contained JSON or began an event
// stream").
func (b *bridge) recordExchange(req *http.Request, resp *http.Response, err error, start time.Time, sent, got int64, msg message, session string) {
	fields := []phases.Field{phases.F("http_method", req.Method), phases.F("path", req.URL.Path)}
	if msg.method != "" {
		fields = append(fields, phases.F("method", msg.method))
	}
	if len(msg.rawID) > 0 {
		fields = append(fields, phases.F("request_id", string(msg.rawID)))
	}
	if resp != nil {
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		body := map[string]string{"application/json": "json", "text/event-stream": "event_stream", "": "none"}[ctype]
		if body == "" {
			body = ctype
		}
		fields = append(fields, phases.F("status", resp.StatusCode), phases.F("body", body))
		if got > 0 {
			fields = append(fields, phases.F("response_bytes", got))
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && sid != session {
			fields = append(fields, phases.F("new_session", digest(sid)))
		}
	} else if err != nil {
		fields = append(fields, phases.F("error_class", errClass(err)), phases.F("error", b.scrub(err.Error())))
	}
	if sent > 0 {
		fields = append(fields, phases.F("request_bytes", sent))
	}
	if session != "" {
		fields = append(fields, phases.F("session", digest(session)))
	}
	fields = append(fields, phases.F("latency_ms", time.Since(start)))
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

func describeStatus(status int, err error) string {
	if err != nil {
		return describeErr(err)
	}
	return fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
}

func describeErr(err error) string {
	if err == nil {
		return ""
	}
	switch errClass(err) {
	case "refused":
		return "connection refused"
	case "dns":
		return "DNS lookup failed: " + err.Error()
	case "reset":
		return "connection reset"
	case "timeout":
		return "timed out"
	}
	return err.Error()
}

// errClass names a transport error for the ledger.
func errClass(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &dns):
		return "dns"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "reset"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	}
	return "other"
}
