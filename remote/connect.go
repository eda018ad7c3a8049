package remote

// A run of a remote server is a connection: connect dials it and records
// where it went; after an outage, attempt tries again.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// connect starts a run: it resolves and dials the server (and completes TLS
// for https) to record where the run goes, then writes connected, or
// connect_failed and returns false. faulty: it failed for a fault time does
// not mend (a certificate not trusted), which is no outage: the requests
// meet it and say what it is.
func (b *bridge) connect() (ok, faulty bool) {
	u := b.cfg.URL
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	// Through a proxy the environment names, the run goes where the HTTP
	// requests go: to the proxy (a DNS failure for a name only the proxy
	// resolves was taken for an outage).
	proxy, _ := http.ProxyFromEnvironment(&http.Request{URL: u})
	if proxy != nil {
		host, port = proxy.Hostname(), proxy.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[proxy.Scheme]
		}
	}
	dialer := &net.Dialer{Timeout: b.cfg.Timeout}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.Timeout)
	defer cancel()
	start := time.Now()
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	b.mu.Lock()
	b.tried = start
	b.gen++
	gen := b.gen
	prev := b.run
	b.run = ledger.NewID("run", start)
	b.mu.Unlock()
	transport := "streamable-http"
	if b.cfg.Transport == TransportLegacy {
		transport = legacyName
	}
	// shim_pid: a run without a process is alive while its shim is.
	fields := []ledger.Field{ledger.F(phases.FieldURL, b.endpoint()), ledger.F(phases.FieldTransport, transport),
		ledger.F(phases.FieldHeaderNames, headerNames(b.cfg.Headers)), ledger.F(phases.FieldGeneration, gen), ledger.F(phases.FieldShimPID, os.Getpid())}
	if prev != "" {
		fields = append(fields, ledger.F(phases.FieldPreviousRun, prev))
	}
	if proxy != nil {
		fields = append(fields, ledger.F("proxy", redact.URL(proxy)))
	}
	if err != nil {
		b.setDown(describeErr(err))
		b.emit(phases.Launch, phases.ConnectFailed, append(fields, ledger.F(phases.FieldErrorClass, errClass(err)), ledger.F(phases.FieldError, b.scrub(err.Error())))...)
		return false, false
	}
	addr := conn.RemoteAddr().String()
	fields = append(fields, ledger.F(phases.FieldAddress, addr), ledger.F("connect_ms", time.Since(start)))
	if u.Scheme == "https" && proxy == nil {
		tc := tlsClient(conn, host)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			why, _ := fault(err)
			if why == "" {
				b.setDown(describeErr(err))
			}
			b.emit(phases.Launch, phases.ConnectFailed, append(fields, ledger.F(phases.FieldErrorClass, "tls"), ledger.F(phases.FieldError, b.scrub(err.Error())))...)
			if why != "" {
				b.say("%s", why)
			}
			return false, why != ""
		}
		fields = append(fields, tlsFacts(tc.ConnectionState())...)
		conn = tc
	} else {
		fields = append(fields, ledger.F("tls", u.Scheme == "https")) // through a proxy's tunnel, its facts unseen here
	}
	conn.Close()
	b.mu.Lock()
	b.addr = addr
	b.runOpen = true
	b.mu.Unlock()
	b.emit(phases.Launch, phases.Connected, fields...)
	return true, false
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
// exchange was (a refusal, a 5xx or a 400 to the replayed initialize; a 401
// or 403 is the server's answer), the server did not take the session back:
// it is a failure, and counts.
func (b *bridge) scheduleFailure(reason string) {
	b.mu.Lock()
	d := b.recon.Next(time.Now(), Unreachable, false, 0)
	b.down = true
	b.newStepLocked()
	b.mu.Unlock()
	if d.Reason == "" {
		d.Reason = reason
	}
	b.tellLoop(d)
}

// attempt is one reconnect after an outage: the client's handshake is
// replayed under the shim's own id when there was one, else the server is
// dialled. It runs on its own goroutine; its result goes back to the loop.
func (b *bridge) attempt() {
	b.mu.Lock()
	initLine, why, step := b.initLine, b.downReason, b.step
	b.mu.Unlock()
	if step != nil {
		defer close(step) // the requests waiting for this step's attempt go on
	}
	b.endRun("unreachable: "+why, true)
	if ok, faulty := b.connect(); faulty {
		// The server is there; what stops the requests is no outage, and
		// each request meets it and says what it is.
		b.mu.Lock()
		b.recon.Next(time.Now(), Answered, false, 0)
		b.down, b.downReason = false, ""
		b.mu.Unlock()
		return
	} else if !ok {
		b.scheduleFailure("cannot connect")
		return
	}
	b.mu.Lock()
	legacy := b.legacyOn && b.endpointURL == nil
	b.mu.Unlock()
	if legacy {
		if err := b.openLegacy(); err != nil {
			b.setDown(b.scrub(describeErr(err)))
			b.scheduleFailure("the HTTP+SSE stream could not be opened")
			return
		}
	}
	if initLine != nil {
		// A 401 or 403 to the replay that signing in did not get past is the
		// server's answer, not an outage: the next request meets it (and its
		// sign-in) again, then the forgotten session (and its replay).
		if class, err := b.replay(); err != nil && class != Denied {
			b.setDown(b.scrub(describeErr(err)))
			b.scheduleFailure("the handshake replay failed")
			return
		}
	}
	b.mu.Lock()
	failures := b.recon.Failures()
	since := b.downSince
	b.recon.Next(time.Now(), Answered, false, 0)
	b.down, b.downReason = false, ""
	b.mu.Unlock()
	b.emit(phases.Supervision, phases.OutageEnded, ledger.F(phases.FieldFailures, failures), ledger.F(phases.FieldDurationMS, time.Since(since)))
	b.say("reconnected to %s after %d failed attempts (%v)", b.endpoint(), failures, time.Since(since).Round(time.Millisecond))
	b.startGET()
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
	if why, _ := fault(err); why != "" {
		return why
	}
	switch errClass(err) {
	case "refused":
		return "connection refused"
	case "dns":
		return "DNS lookup failed: " + err.Error()
	case "reset":
		return "connection reset"
	case "closed":
		return "the server closed the connection without answering"
	case "cut":
		return "the answer broke off"
	case "timeout":
		return "timed out"
	}
	return err.Error()
}

// Windows' errnos for a refused and a reset connection (WSAECONNREFUSED,
// WSAECONNRESET): syscall's ECONNREFUSED and ECONNRESET are never returned
// there. No Unix errno has their numbers.
const (
	wsaeConnRefused = syscall.Errno(10061)
	wsaeConnReset   = syscall.Errno(10054)
)

// errClass names a transport error for the ledger.
func errClass(err error) string {
	var dns *net.DNSError
	if why, _ := fault(err); why != "" {
		return faultClass(err)
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, wsaeConnRefused):
		return "refused"
	case errors.As(err, &dns):
		return "dns"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, wsaeConnReset):
		return "reset"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut"
	case errors.Is(err, io.EOF):
		return "closed" // a clean close is not a reset
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	}
	return "other"
}
