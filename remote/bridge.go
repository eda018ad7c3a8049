// Package remote is the bridge between a stdio MCP client and a server
// over Streamable HTTP (`mcpshim --url`): each client line is POSTed as the
// body, each answer reaches the client as one line, the exchanges are
// recorded in the same phase ledger as a child process's, and the failures
// of a remote session get seed 004's reconnect policy.
//
// It never spawns a process nor reads a client config (supervisor, proc and
// clientconfig own those); the HTTP exchange, the session and the reconnect
// decisions are its own.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/tap"
)

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
	// CheckTools, when set, checks each complete tools/list the server
	// returns against the locked surface and returns the locked tools it
	// lacks (lock.go).
	CheckTools func(tools []json.RawMessage) (missing []string)
	// EnforceLock makes a violation fail the server for the client: the
	// tools/list is answered with an error and the bridge exits 78.
	EnforceLock bool
	// Auth signs the bridge in on a 401 or 403 (auth.go); nil leaves the
	// credential to --header.
	Auth *oauth.Session
}

// modern reports whether version is 2026-07-28 or later: no session, no GET
// stream, and the standard Mcp-Method and Mcp-Name headers.
func modern(version string) bool { return version >= "2026-07-28" }

type bridge struct {
	cfg  Config
	http *http.Client
	wire *jsonrpc.Wire // the client's stdout
	rec  *tap.Recorder

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
	owed        map[idKey]bool // requests the shim answered itself
	down        bool           // between an outage and a reconnect: requests are answered at once
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

	pages      []json.RawMessage // tools of the tools/list being answered (lock.go)
	lockBroken chan struct{}     // closed when an enforced lock broke
	lockOnce   sync.Once
}

// call is a client request waiting for its answer.
type call struct {
	id     idKey
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
		owed:    map[idKey]bool{},
		recon:   NewReconnector(cfg.Policy),
		outage:  make(chan Decision, 1),
		gone:    make(chan struct{}),

		lockBroken: make(chan struct{}),
	}
	defer stop()
	if cfg.Auth != nil {
		cfg.Auth.Observe(b.authStep, sayWriter{b})
	}
	return b.loop(ctx)
}

func (b *bridge) emit(p phases.Phase, event string, fields ...ledger.Field) {
	b.mu.Lock()
	run := b.run
	b.mu.Unlock()
	b.rec.Emit(ledger.Record{Time: time.Now(), Run: run, Phase: p, Event: event, Fields: fields})
}

func (b *bridge) say(format string, args ...any) {
	b.rec.Say(b.scrub(fmt.Sprintf("mcpshim %s: "+format+"\n", append([]any{b.cfg.Name}, args...)...)))
}

// scrub hides header values and anything secret-shaped in text bound for a
// log or the ledger: a server may echo a credential back in an error.
func (b *bridge) scrub(s string) string {
	for _, h := range b.cfg.Headers {
		if len(h.Value) >= 4 {
			s = strings.ReplaceAll(s, h.Value, redact.Marker)
		}
		// The credential alone, as a server may quote it without its scheme.
		for _, w := range strings.Fields(h.Value) {
			if len(w) >= 8 {
				s = strings.ReplaceAll(s, w, redact.Marker)
			}
		}
	}
	// Nothing a server wrote may drive the reader's terminal.
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' {
			return '?'
		}
		return r
	}, redact.String(s))
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
			b.emit(phases.Supervision, phases.ReconnectScheduled, ledger.F("failures", d.Failures), ledger.F("of", b.cfg.Policy.MaxRetries+1),
				ledger.F("delay_ms", d.Delay), ledger.F("reason", d.Reason))
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
			b.finishSignIn(ctx)
			return 0
		case <-b.gone:
			b.leave("stdout_closed")
			return 0
		case <-b.lockBroken:
			b.shutdown("lock_broken", fmt.Sprintf("mcpshim: server %s broke the tool surface lock; stopped", b.cfg.Name))
			return ExitConfig
		case sig := <-b.cfg.Signals:
			b.emit(phases.Interruption, phases.SignalReceived, ledger.F("signal", sig.String()), ledger.F("forwarded", false))
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
	b.emit(phases.Interruption, phases.ClientDisconnected, ledger.F("reason", reason))
	b.shutdown(reason, "mcpshim: the client left before the server answered")
}

// shutdown lets the requests in flight finish within the grace, ends the
// session and answers what is left with text.
func (b *bridge) shutdown(reason, text string) {
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
		b.answer(c, text, nil)
	}
	b.endRun(reason, false)
}

func (b *bridge) giveUp(d Decision) {
	b.emit(phases.Supervision, phases.ReconnectsExhausted, ledger.F("failures", d.Failures), ledger.F("reason", b.reasonNow(d.Reason)))
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
	fields := []ledger.Field{ledger.F("reason", reason)}
	if failed {
		fields = append(fields, ledger.F("exit_code", ExitUnavailable))
	}
	b.emit(phases.Launch, phases.Disconnected, fields...)
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
		b.emit(phases.Supervision, phases.MessageRejected, ledger.F("direction", "client"), ledger.F("reason", "not a JSON-RPC message"), ledger.F("bytes", len(line)))
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
		if m.isRequest() && m.hasID() {
			c := &call{id: m.id, rawID: m.rawID, method: m.method, tool: m.name, cancel: cancel}
			b.pending[m.id] = c
			calls = append(calls, c)
		}
	})
	b.mu.Unlock()
	if down {
		cancel()
		for _, c := range calls {
			b.fail(c.id, fmt.Sprintf("mcpshim: server %s is unreachable (%s); reconnecting", b.cfg.Name, reason), nil)
		}
		if len(calls) == 0 {
			b.emit(phases.Supervision, phases.MessageRejected, ledger.F("method", msg.method), ledger.F("reason", "server unreachable"))
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
		b.emit(phases.Transport, phases.StdoutNoise, ledger.F("direction", "server"), ledger.F("bytes", len(data)),
			ledger.F("preview", redact.Preview(data, 120)), ledger.F("action", "dropped"))
		b.say("the server sent a body that is not JSON (%d bytes); dropped", len(data))
		return
	}
	msg := inspect(line)
	forward := true
	var late, unknown []string
	lockList := false
	b.mu.Lock()
	if msg.method == "" && msg.isResponse() || msg.isBatch() {
		msg.each(func(m message) {
			if !m.isResponse() {
				return
			}
			if _, ok := b.pending[m.id]; !ok {
				switch {
				case b.owed[m.id]:
					late = append(late, string(m.rawID)) // the shim answered it already
				case m.id.IsNull():
					// The server could not tie its error to a request: the request
					// it answers gets the error, with this message, from the shim.
					// Clients take an id-null error as fatal (the Go SDK closes).
					late = append(late, "null")
				default:
					unknown = append(unknown, string(m.rawID)) // an id the client never sent: the client judges
				}
				return
			}
			lockList = lockList || !msg.isBatch() && b.toolsList(m)
			if b.pending[m.id].method == "initialize" && m.isResult() {
				if v := m.negotiated(); v != "" {
					b.version = v
				}
			}
			delete(b.pending, m.id)
		})
		forward = len(late) == 0 || msg.isBatch()
	}
	b.mu.Unlock()
	for _, id := range late {
		b.emit(phases.Supervision, phases.LateResponseDropped, ledger.F("request_id", id))
	}
	for _, id := range unknown {
		b.emit(phases.Transport, phases.UnknownResponse, ledger.F("request_id", id), ledger.F("direction", "server"))
	}
	if !forward {
		return
	}
	if lockList && !b.checkLock(msg) {
		b.observe(phases.FromServer, line) // recorded as the list it was; the client got the error
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
	l := tap.Observation{Data: data, Size: int64(len(line) + 1), Truncated: n < len(line), Forwarded: true, End: time.Now(), Msg: tapMsg(data)}
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
	b.mu.Lock()
	b.owed[c.id] = true // its real answer, should it come, is dropped
	b.mu.Unlock()
	if _, err := b.wire.WriteMessage(errorAnswer(c.rawID, text, data)); err != nil {
		b.clientGone()
		return
	}
	fields := []ledger.Field{ledger.F("request_id", string(c.rawID)), ledger.F("method", c.method), ledger.F("direction", "client")}
	if c.tool != "" {
		fields = append(fields, ledger.F("tool", c.tool))
	}
	b.emit(phases.Interruption, phases.PendingFailed, append(fields, ledger.F("message", text))...)
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
