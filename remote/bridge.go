// Package remote is the bridge between a stdio MCP client and a server
// over Streamable HTTP, or the 2024-11-05 HTTP+SSE transport (`mcpshim
// --url`): each client line is POSTed as the body, each answer reaches the
// client as one line, the exchanges are recorded in the same phase ledger as
// a child process's, and the failures of a remote session get the reconnect
// policy (policy.go).
//
// It never spawns a process nor reads a client config (supervisor, proc and
// clientconfig own those); the HTTP exchange, the session and the reconnect
// decisions are its own.
package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/tap"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// DefaultMaxMessage is the cap of one server message: well above real tool
// results, far below what an endless body would take.
const DefaultMaxMessage = 128 << 20

// ExitUnavailable is EX_UNAVAILABLE: the shim gave up on the server.
const ExitUnavailable = 69

// Config is everything one bridge needs.
type Config struct {
	Name    string
	URL     *url.URL
	Headers []Header

	Recorder  *tap.Recorder
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
	// MaxMessage caps one message from the server, after decompression:
	// past it the request gets an error and the bridge goes on.
	MaxMessage int64
	// CheckTools, when set, checks each complete tools/list the server
	// returns against the locked surface and returns the locked tools it
	// lacks (lock.go).
	CheckTools func(tools []json.RawMessage) (missing []string)
	// EnforceLock makes a violation fail the server for the client: the
	// tools/list is answered with an error and the bridge exits 78.
	EnforceLock bool
	// Transport is TransportAuto (the default), TransportHTTP or
	// TransportLegacy.
	Transport string
	// Auth signs the bridge in on a 401 or 403 (auth.go); nil leaves the
	// credential to --header.
	Auth *oauth.Session
}

type bridge struct {
	cfg     Config
	secrets *scrubber
	http    *http.Client
	wire    *jsonrpc.Wire // the client's stdout
	rec     *tap.Recorder

	ctx    context.Context // ends when the bridge stops
	stop   context.CancelFunc
	posts  sync.WaitGroup // request goroutines in flight; Add only under mu while !closing
	bg     sync.WaitGroup // reconnect attempts and GET streams; Add only under mu while !closing
	ownSeq atomic.Int64

	// reinit serializes re-initializations: requests that meet the same 404
	// together wait for one.
	reinit sync.Mutex
	// long lets one message over the hold be read at a time (stream.go).
	long sync.Mutex

	mu          sync.Mutex
	closing     bool              // the bridge is stopping: no goroutine may start (posts, bg)
	session     string            // Mcp-Session-Id; "" in the modern era
	version     string            // the negotiated protocol version (legacy), for MCP-Protocol-Version
	initLine    []byte            // the client's initialize, replayed under the shim's own id
	initialized []byte            // the client's notifications/initialized
	level       []byte            // the client's last logging/setLevel (restore.go)
	subs        map[string][]byte // its resources/subscribe by uri
	toolsSeen   map[string]string // the last complete tools/list the client got: name to digest (restore.go)
	toolPages   map[string]string // the pages of the list it is paging through, nil when none
	listID      idKey             // the request of that list's latest page
	pending     map[idKey]*call
	done        doneSet // requests answered: a second answer to one is dropped
	down        bool    // between an outage and a reconnect: requests are answered at once
	downReason  string
	downSince   time.Time // the first failure of the outage
	retryAt     time.Time // the next attempt, for the errors during the outage
	tried       time.Time // the last connection or attempt started, for those errors
	// step is closed when the attempt that ends the current backoff step
	// has run; early: a client's request already brought it forward (one
	// early attempt per step); wake asks the loop for it.
	step       chan struct{}
	early      bool
	wake       chan struct{}
	recon      *Reconnector
	run        string
	gen        int
	addr       string             // the server's resolved address
	runOpen    bool               // connected was written and disconnected not yet
	getCancel  context.CancelFunc // the GET stream's, for getSession
	getSession string

	// The 2024-11-05 HTTP+SSE transport (legacy.go).
	endpointURL *url.URL   // where POSTs go while its stream is open
	legacyTried bool       // auto tried it once; --transport sse always
	legacyOn    bool       // it worked once: a reconnect reopens it
	legacyMu    sync.Mutex // one opening at a time
	// own are the shim's own requests waiting for an answer on a stream.
	own map[idKey]chan []byte

	outage   chan Decision // to the loop: reconnect or give up
	gone     chan struct{} // closed when writing to the client failed
	goneOnce sync.Once

	pages        lock.Pages               // tools of the tools/list being answered (lock.go)
	paramHeaders map[string][]paramHeader // a 2026-07-28 tool's Mcp-Param-* headers (params.go)
	lockBroken   chan struct{}            // closed when an enforced lock broke
	lockOnce     sync.Once
}

// call is a client request waiting for its answer.
type call struct {
	id      idKey
	rawID   []byte
	method  string
	tool    string
	version string // the protocol version a 2026-07-28 request names
	cancel  context.CancelFunc
	done    chan struct{} // closed when it leaves pending (take)
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
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.Transport == "" {
		cfg.Transport = TransportAuto
	}
	bctx, stop := context.WithCancel(context.Background())
	b := &bridge{
		cfg:     cfg,
		secrets: newScrubber(cfg.URL, cfg.Headers),
		// A transport of its own, with the proxy rule of Go's default one,
		// which the sign-in's requests use: one rule for both
		// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; never for loopback).
		http: &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
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
		own:     map[idKey]chan []byte{},
		subs:    map[string][]byte{},
		done:    newDoneSet(),
		recon:   NewReconnector(cfg.Policy),
		outage:  make(chan Decision, 1),
		wake:    make(chan struct{}, 1),
		gone:    make(chan struct{}),

		lockBroken: make(chan struct{}),
	}
	b.http.CheckRedirect = b.checkRedirect
	if cfg.Auth != nil {
		b.secrets.more = cfg.Auth.Secrets
		cfg.Auth.Observe(b.authStep, sayWriter{b})
		redact.HideAlso(b.secrets.known, cfg.Auth.Secrets)
	} else {
		redact.HideAlso(b.secrets.known)
	}
	code := b.loop(ctx)
	b.finish()
	return code
}

// finish stops every goroutine the bridge started and waits for them, up to
// the grace: each ends when the bridge's context does, but one may be
// writing to a client that stopped reading.
func (b *bridge) finish() {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	b.stop()
	done := make(chan struct{})
	// Exits when the last of them has.
	go func() { b.posts.Wait(); b.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(b.cfg.Grace):
	}
}

// goBG starts f on a goroutine of its own that finish waits for, unless the
// bridge is stopping.
func (b *bridge) goBG(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return
	}
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		f()
	}()
}

// emit records an event; every string field is scrubbed.
func (b *bridge) emit(p phases.Phase, event string, fields ...ledger.Field) {
	for i, f := range fields {
		if v, ok := f.Value.(string); ok {
			fields[i].Value = b.scrub(v)
		}
	}
	b.mu.Lock()
	run := b.run
	b.mu.Unlock()
	b.rec.Emit(ledger.Record{Time: time.Now(), Run: run, Phase: p, Event: event, Fields: fields})
}

// say prints a line for the person reading the client's log. Only the
// message is scrubbed, not the server's name: a server named auth stays
// "mcpshim auth:". Nothing a server wrote may drive the reader's terminal.
func (b *bridge) say(format string, args ...any) {
	msg := b.scrub(fmt.Sprintf(format, args...))
	b.rec.Say(termsafe.String(fmt.Sprintf("mcpshim %s: %s", b.cfg.Name, msg)) + "\n")
}

// scrub hides the bridge's credentials and anything secret-shaped in text
// bound for a log, the ledger or the client: a server may echo a
// credential back in an error, and Go's errors quote the URL.
func (b *bridge) scrub(s string) string { return b.secrets.String(s) }

// endpoint is the URL as the ledger shows it: no query, no user info.
func (b *bridge) endpoint() string {
	u := *b.cfg.URL
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func (b *bridge) loop(ctx context.Context) int {
	clientDone := make(chan error, 1)
	if ok, faulty := b.connect(); !ok && !faulty {
		b.scheduleFailure("cannot connect")
	}
	// The client reader lives as long as the client's stdin: a blocking read
	// of stdin cannot be interrupted, so it exits at EOF or with the process
	// (not joined). What it reads is sent by dispatch, which finish joins.
	in := &clientIn{lines: make(chan []byte, clientQueue), eof: make(chan struct{})}
	go b.readClient(in)
	b.goBG(func() { b.dispatch(in, clientDone) })
	var retry <-chan time.Time
	for {
		select {
		case d := <-b.outage:
			if d.Action == GiveUp {
				b.giveUp(d)
				return ExitUnavailable
			}
			b.mu.Lock()
			b.downSince, b.retryAt = d.Since, time.Now().Add(d.Delay)
			early := b.early // a request came since the failure opened the step
			b.mu.Unlock()
			b.emit(phases.Supervision, phases.ReconnectScheduled, ledger.F(phases.FieldFailures, d.Failures), ledger.F(phases.FieldDelayMS, d.Delay), ledger.F(phases.FieldReason, d.Reason))
			switch {
			case d.Page:
				// A page on the third consecutive failure: a signal to a
				// person; the bridge goes on trying.
				b.emit(phases.Supervision, phases.OutagePaged, ledger.F(phases.FieldFailures, d.Failures), ledger.F("since", d.Since.UTC().Format(time.RFC3339Nano)),
					ledger.F(phases.FieldReason, b.reasonNow(d.Reason)))
				b.say("server unreachable for %v (%d failures: %s); still retrying, up to every %v", time.Since(d.Since).Round(time.Millisecond),
					d.Failures, b.reasonNow(d.Reason), b.cfg.Policy.BackoffMax)
			case d.Failures == 1:
				b.say("%s; retrying in %v", b.reasonNow(d.Reason), d.Delay.Round(time.Millisecond))
			}
			if early {
				// Its attempt now (the one early attempt of this step); its
				// wake, if the loop has not read it, is spent.
				select {
				case <-b.wake:
				default:
				}
				retry = nil
				b.goBG(b.attempt)
			} else {
				retry = time.After(d.Delay)
			}
		case <-retry:
			retry = nil
			// One attempt: its dial and replay are bounded by Timeout and end
			// when the bridge stops; its result comes back on b.outage.
			b.goBG(b.attempt)
		case <-b.wake:
			// A client's request during the backoff: the server may be back
			// already, and the request waits for this attempt.
			if retry != nil {
				retry = nil
				b.goBG(b.attempt)
			}
		case err := <-clientDone:
			reason := "stdin_eof"
			if err != nil {
				reason = "stdin_error: " + err.Error()
			}
			b.leave(reason)
			b.finishSignIn(ctx)
			return 0
		case <-b.gone:
			b.leave("stdout_closed")
			return 0
		case <-b.lockBroken:
			b.shutdown("lock_broken", fmt.Sprintf("mcpshim: server %s broke the tool surface lock; stopped", b.cfg.Name))
			return lock.ExitConfig
		case sig := <-b.cfg.Signals:
			b.emit(phases.Interruption, phases.SignalReceived, ledger.F(phases.FieldSignal, sig.String()), ledger.F(phases.FieldForwarded, false))
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
	b.emit(phases.Interruption, phases.ClientDisconnected, ledger.F(phases.FieldReason, reason))
	b.shutdown(reason, "mcpshim: the client left before the server answered")
}

// shutdown lets the requests in flight finish within the grace, ends the
// session and answers what is left with text.
func (b *bridge) shutdown(reason, text string) {
	b.mu.Lock()
	b.closing = true // no request starts after this: posts.Add never races the Wait
	b.mu.Unlock()
	done := make(chan struct{})
	// Exits when the last request in flight ends; after the grace, b.stop
	// cuts them all.
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
		b.answer(c, text, nil)
	}
	b.endRun(reason, false)
}

func (b *bridge) giveUp(d Decision) {
	b.emit(phases.Supervision, phases.ReconnectsExhausted, ledger.F(phases.FieldFailures, d.Failures), ledger.F(phases.FieldReason, b.reasonNow(d.Reason)))
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
	fields := []ledger.Field{ledger.F(phases.FieldReason, reason)}
	if failed {
		fields = append(fields, ledger.F(phases.FieldExitCode, ExitUnavailable))
	}
	b.emit(phases.Launch, phases.Disconnected, fields...)
}

// observe hands a line to the tracker, as the stdio relay does.
// As the stdio tap, it keeps the first MiB of a long line, and up to
// --max-observe of one it needs whole (whole: a tools/list answer); the
// scanner still sees every byte, so an id written last is found.
func (b *bridge) observe(dir phases.Dir, line []byte, whole bool) {
	n := min(len(line), 1<<20)
	if whole {
		n = min(len(line), b.cfg.MaxObserve)
	}
	data := append([]byte(nil), line[:n]...)
	l := tap.Observation{Data: data, Size: int64(len(line) + 1), Truncated: n < len(line), Forwarded: true, End: time.Now(), Msg: tapMsg(line, data)}
	b.rec.Line(dir, &l)
}

// fail answers the request id with an error, unless it is answered already.
func (b *bridge) fail(id idKey, text string, data map[string]any) {
	b.mu.Lock()
	c := b.take(id)
	b.mu.Unlock()
	if c != nil {
		b.answer(c, text, data)
	}
}

// take removes the pending request id, if it is, and wakes whoever waits
// for its answer (awaitStream); the caller holds mu.
func (b *bridge) take(id idKey) *call {
	c := b.pending[id]
	if c != nil {
		delete(b.pending, id)
		close(c.done)
	}
	return c
}

func (b *bridge) answer(c *call, text string, data map[string]any) {
	// The shim's own error may quote a server's text: shown escaped, as on
	// stderr and in the ledger, so that no escape or bidi override of the
	// server's reaches the client's display raw.
	text = termsafe.String(b.scrub(text))
	for k, v := range data {
		if s, ok := v.(string); ok {
			data[k] = termsafe.String(b.scrub(s))
		}
	}
	b.mu.Lock()
	b.done.add(c.id, true) // its real answer, should it come, is dropped
	b.mu.Unlock()
	if _, err := b.wire.WriteMessage(errorAnswer(c.rawID, text, data)); err != nil {
		b.clientGone()
		return
	}
	fields := []ledger.Field{ledger.F(phases.FieldRequestID, string(c.rawID)), ledger.F(phases.FieldMethod, c.method), ledger.F(phases.FieldDirection, "client")}
	if c.tool != "" {
		fields = append(fields, ledger.F(phases.FieldTool, c.tool))
	}
	b.emit(phases.Interruption, phases.PendingFailed, append(fields, ledger.F(phases.FieldMessage, text))...)
}

func (b *bridge) takeAll() []*call {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*call
	for id := range b.pending {
		out = append(out, b.take(id))
	}
	return out
}

// failInFlight answers every request in flight and cancels its exchange:
// in an outage, requests in flight get errors at once.
func (b *bridge) failInFlight(text string) {
	for _, c := range b.stopInFlight() {
		c.cancel()
		b.answer(c, text, nil)
	}
}
