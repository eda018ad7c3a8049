package remote

// The 2024-11-05 HTTP+SSE transport, which many deployed servers still
// speak: the client opens a GET event stream, whose first event
// ("endpoint") names the URL to POST each message to; every answer comes
// back on the stream. The 2025-03-26 spec's backwards compatibility
// section: a client "POST an InitializeRequest to the server URL"; "If it
// fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed or 404
// Not Found): Issue a GET request to the server URL, expecting that this
// will open an SSE stream and return an endpoint event as the first event".

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/sse"
)

// Transports, as --transport names them.
const (
	TransportAuto   = "auto"     // Streamable HTTP, falling back to HTTP+SSE on a 400, 404 or 405 to the first initialize
	TransportHTTP   = "http"     // Streamable HTTP only
	TransportLegacy = "sse"      // the 2024-11-05 HTTP+SSE transport only
	legacyName      = "http+sse" // as the ledger names it
)

// legacyEndpoint is where POSTs go in the old transport, nil otherwise.
func (b *bridge) legacyEndpoint() *url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.endpointURL
}

// postURL is where a message is POSTed.
func (b *bridge) postURL() string {
	if e := b.legacyEndpoint(); e != nil {
		return e.String()
	}
	return b.cfg.URL.String()
}

// fallsBack reports whether the answer to a POST says the server speaks
// the old transport: a 400, 404 or 405 to the first initialize, with
// --transport auto.
func (b *bridge) fallsBack(msg message, status int, session string) bool {
	b.mu.Lock()
	tried := b.legacyTried
	b.mu.Unlock()
	return b.cfg.Transport == TransportAuto && !tried && msg.method == mcp.MethodInitialize && session == "" &&
		(status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusMethodNotAllowed)
}

// ensureLegacy opens the old transport's stream when --transport sse asks
// for it and none is open: before the first message and after an outage.
func (b *bridge) ensureLegacy() error {
	if b.cfg.Transport != TransportLegacy || b.legacyEndpoint() != nil {
		return nil
	}
	b.legacyMu.Lock()
	defer b.legacyMu.Unlock()
	if b.legacyEndpoint() != nil {
		return nil
	}
	return b.openLegacy()
}

// openLegacy opens the GET stream, waits (up to Timeout) for its endpoint
// event, and leaves a goroutine reading the stream. The endpoint must be on
// the URL's origin: the credentials go nowhere else.
func (b *bridge) openLegacy() error {
	b.mu.Lock()
	b.legacyTried = true
	b.mu.Unlock()
	ctx, cancel := context.WithCancel(b.ctx)
	timer := time.AfterFunc(b.cfg.Timeout, cancel) // runs once, if the endpoint takes longer than Timeout
	defer timer.Stop()
	var resp *http.Response
	for tries := 0; ; tries++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.URL.String(), nil)
		b.setHeaders(req, message{}, "")
		start := time.Now()
		var err error
		resp, err = b.http.Do(req)
		b.recordExchange(req, resp, err, start, 0, 0, message{}, "")
		if err != nil {
			cancel()
			return err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			break
		}
		drain(resp)
		timer.Stop() // a sign-in has its own bounds (auth.go)
		if de := b.denied(b.ctx, resp, tries); de != nil {
			cancel()
			return de
		}
		timer.Reset(b.cfg.Timeout)
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ctype != "text/event-stream" {
		drain(resp)
		cancel()
		return fmt.Errorf("the GET for the HTTP+SSE transport got HTTP %d %q", resp.StatusCode, ctype)
	}
	events := sse.NewReader(resp.Body, b.cfg.MaxMessage)
	ev, err := events.Next()
	if err == nil && ev.Type != "endpoint" {
		err = fmt.Errorf("the stream's first event is %q, not endpoint", ev.Type)
	}
	var endpoint *url.URL
	if err == nil {
		endpoint, err = b.cfg.URL.Parse(strings.TrimSpace(string(ev.Data)))
	}
	if err == nil && !sameOrigin(endpoint, b.cfg.URL) {
		err = fmt.Errorf("the server named an endpoint on another origin (%s); not followed", redact.URL(endpoint))
	}
	if err != nil {
		resp.Body.Close()
		cancel()
		return err
	}
	timer.Stop()
	b.secrets.addQuery(endpoint)
	b.mu.Lock()
	b.endpointURL, b.legacyOn = endpoint, true
	b.mu.Unlock()
	b.emit(phases.Transport, phases.SSEEndpoint, ledger.F(phases.FieldTransport, legacyName), ledger.F("endpoint", redact.URL(endpoint)))
	// The stream's context lives as long as the stream: ended with it.
	b.goBG(func() { defer cancel(); b.legacyStream(ctx, resp, events) })
	return nil
}

// awaitStream waits, up to the request timeout, for the answers to the
// requests of msg, which the old transport sends on its stream: one that
// does not come in time gets the timeout's error, as over Streamable HTTP.
func (b *bridge) awaitStream(ctx context.Context, msg message) {
	var waits []chan struct{}
	b.mu.Lock()
	msg.each(func(m message) {
		if c := b.pending[m.id]; c != nil && m.isRequest() {
			waits = append(waits, c.done)
		}
	})
	b.mu.Unlock()
	timeout := time.NewTimer(b.cfg.Timeout)
	defer timeout.Stop()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return // cut off: an outage or the bridge stopping answers it
		case <-timeout.C:
			b.failOpen(msg, fmt.Sprintf("mcpshim: server %s: no answer within the request timeout (--request-timeout %v); not re-sent, as it may have run", b.cfg.Name, b.cfg.Timeout))
			return
		}
	}
}

// legacyStream passes the stream's messages to the client. It exits when
// the stream ends: when the bridge stops, or the server went away, which
// is an outage (the stream is the session).
func (b *bridge) legacyStream(ctx context.Context, resp *http.Response, events *sse.Reader) {
	defer resp.Body.Close()
	var err error
	for {
		var d io.Reader
		if d, err = events.NextData(); err != nil {
			break
		}
		if t := events.Type(); t == "" || t == "message" {
			err = b.deliver(d, func() { resp.Body.Close() })
		} else {
			_, err = io.Copy(io.Discard, d)
		}
		if err != nil {
			break
		}
	}
	if ctx.Err() != nil && b.ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	b.endpointURL = nil
	b.mu.Unlock()
	d := b.judge(Unreachable, false, "the server's event stream ended ("+describeErr(err)+")", 0)
	b.failed(message{}, d, "", nil)
}
