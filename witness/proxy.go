package witness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Result statuses. Status says how far the connection got; a failure after the
// connection was made is reported as StatusConnected with Err set.
const (
	StatusConnected  = "connected"
	StatusRefused    = "refused"
	StatusDNSFailure = "dns_failure"
	StatusTimeout    = "timeout"
	StatusDenied     = "denied"
	StatusError      = "error"
)

// dialTimeout bounds how long a child waits on the witness for a destination.
const dialTimeout = 30 * time.Second

// maxHeadBytes bounds a request or response head the witness parses.
const maxHeadBytes = 1 << 20

var (
	errHeadTooLarge = errors.New("message head too large")
	errBadChunk     = errors.New("malformed chunk size")
)

// Attempt is an outbound connection the child asked for, reported before any
// byte reaches the destination.
type Attempt struct {
	ID     string // unique within one Witness; joins the Attempt to its Result
	Host   string // as the child named it, lower-cased, without a trailing dot
	Port   int
	Scheme string // "http" for a forwarded request, "connect" for a tunnel (its payload is unknown yet)
	Method string // "CONNECT", or the forwarded request's method
	Start  time.Time
}

// Result is how an Attempt ended.
type Result struct {
	ID         string
	Status     string        // one of the Status constants
	HTTPStatus int           // the origin's final status for a forwarded request; 0 for tunnels and failures
	TLS        bool          // a tunnel whose first bytes from the child opened a TLS handshake
	BytesOut   int64         // relayed child to destination (request head and body, or tunnel payload)
	BytesIn    int64         // relayed destination to child
	Duration   time.Duration // from Attempt.Start until the exchange or tunnel ended
	Err        string
}

// Config says what the witness refuses and whom it tells.
type Config struct {
	// Deny lists hosts refused with 403 and reported as StatusDenied: an exact
	// name or address, or "*.suffix" for every name under suffix (not suffix itself).
	Deny []string
	// OnAttempt is called before the destination is dialled; OnResult once the
	// attempt ends. Both run on the connection's goroutine, so calls for
	// different connections may overlap, and a slow callback delays the child.
	OnAttempt func(Attempt)
	OnResult  func(Result)
	// Dial reaches destinations; nil means a net.Dialer. Tests use it to give
	// made-up names loopback addresses.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Witness is a loopback HTTP proxy that records every connection the child
// makes through it. It never decrypts or rewrites what the child sends: a
// CONNECT is a raw byte tunnel, and an absolute-URI request is relayed
// verbatim except that its request line takes origin form, as RFC 9112 §3.2.1
// requires of anything talking to an origin server. Each forwarded request
// gets its own connection to the destination.
type Witness struct {
	cfg    Config
	ln     net.Listener
	ctx    context.Context // cancelled by Close to abort dials
	cancel context.CancelFunc
	nextID atomic.Uint64
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // child and destination conns Close must end

	closeOnce sync.Once
	closeErr  error
}

// Start listens on 127.0.0.1 at a free port and serves until Close.
func Start(cfg Config) (*Witness, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen egress witness: %w", err)
	}
	deny := make([]string, len(cfg.Deny))
	for i, d := range cfg.Deny {
		deny[i] = normalizeHost(d)
	}
	cfg.Deny = deny
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Witness{cfg: cfg, ln: ln, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	w.wg.Add(1)
	// The accept loop: returns when Close closes the listener; Close waits
	// for it.
	go w.accept()
	return w, nil
}

// Env returns the variables that point a child at the witness, to append after
// os.Environ() (exec.Cmd keeps the last of duplicate keys). NO_PROXY and
// no_proxy are set empty so that no destination, loopback included, bypasses
// the witness in runtimes that read them.
func (w *Witness) Env() []string {
	u := "http://" + w.ln.Addr().String()
	return []string{
		"HTTP_PROXY=" + u, "http_proxy=" + u,
		"HTTPS_PROXY=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u,
		"NODE_USE_ENV_PROXY=1",
		"NO_PROXY=", "no_proxy=",
	}
}

// Close stops listening, ends open tunnels and exchanges, and returns once
// every OnResult call has returned. Later calls return the first call's error.
func (w *Witness) Close() error {
	w.closeOnce.Do(func() {
		w.closeErr = w.ln.Close()
		w.cancel()
		w.mu.Lock()
		w.closed = true
		for c := range w.conns {
			c.Close()
		}
		w.mu.Unlock()
		w.wg.Wait()
	})
	return w.closeErr
}

func (w *Witness) accept() {
	defer w.wg.Done()
	for {
		c, err := w.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond) // e.g. out of descriptors: let some close
			continue
		}
		if !w.track(c) {
			c.Close()
			return
		}
		w.wg.Add(1)
		// One client connection: returns when it ends or Close closes it;
		// Close waits for it.
		go w.serve(c)
	}
}

// track registers c for Close; false means the witness is already closed.
func (w *Witness) track(c net.Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.conns[c] = struct{}{}
	return true
}

func (w *Witness) release(c net.Conn) {
	c.Close()
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}

// serve handles one child connection: a tunnel, or a run of forwarded requests.
func (w *Witness) serve(c net.Conn) {
	defer w.wg.Done()
	defer w.release(c)
	br := bufio.NewReader(c)
	for {
		head, err := readHead(br, true)
		if err != nil {
			if len(head) > 0 {
				writeStatus(c, http.StatusBadRequest, err.Error())
			}
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(head))))
		if err != nil {
			writeStatus(c, http.StatusBadRequest, err.Error())
			return
		}
		a, err := w.attempt(req)
		if err != nil {
			writeStatus(c, http.StatusBadRequest, err.Error())
			return
		}
		if a.Method == http.MethodConnect {
			w.tunnel(c, br, a)
			return
		}
		if !w.forward(c, br, head, req, a) {
			return
		}
	}
}

// attempt names the destination of a CONNECT or absolute-URI request.
func (w *Witness) attempt(req *http.Request) (Attempt, error) {
	a := Attempt{Method: req.Method, Start: time.Now()}
	defaultPort := ""
	switch {
	case req.Method == http.MethodConnect:
		a.Scheme = "connect"
	case req.URL.Scheme == "http" && req.URL.Host != "":
		a.Scheme, defaultPort = "http", "80"
	default:
		return Attempt{}, fmt.Errorf("want CONNECT or an absolute http URI, got %s %s", req.Method, req.RequestURI)
	}
	a.Host = normalizeHost(req.URL.Hostname())
	port := req.URL.Port()
	if port == "" {
		port = defaultPort
	}
	p, err := strconv.Atoi(port)
	if a.Host == "" || err != nil || p < 1 || p > 65535 {
		return Attempt{}, fmt.Errorf("bad destination %q", req.URL.Host)
	}
	a.Port = p
	a.ID = "egress-" + strconv.FormatUint(w.nextID.Add(1), 10)
	return a, nil
}

// open reports a and connects to its destination unless denied. With a nil
// conn, res says why.
func (w *Witness) open(a Attempt) (net.Conn, Result) {
	if w.cfg.OnAttempt != nil {
		w.cfg.OnAttempt(a)
	}
	res := Result{ID: a.ID}
	if denied(w.cfg.Deny, a.Host) {
		res.Status = StatusDenied
		return nil, res
	}
	ctx, cancel := context.WithTimeout(w.ctx, dialTimeout)
	defer cancel()
	up, err := w.cfg.Dial(ctx, "tcp", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
	if err != nil {
		res.Status, res.Err = classify(err), err.Error()
		return nil, res
	}
	if !w.track(up) {
		up.Close()
		res.Status, res.Err = StatusError, "witness closed"
		return nil, res
	}
	res.Status = StatusConnected
	return up, res
}

func (w *Witness) report(res Result, a Attempt) {
	res.Duration = time.Since(a.Start)
	if res.Err != "" && w.ctx.Err() != nil {
		res.Err = "witness closed: " + res.Err
	}
	if w.cfg.OnResult != nil {
		w.cfg.OnResult(res)
	}
}

// refuse answers the child for an attempt that did not connect.
func (w *Witness) refuse(c net.Conn, res Result, a Attempt) {
	code := http.StatusBadGateway
	msg := res.Status + ": " + res.Err
	switch res.Status {
	case StatusDenied:
		code, msg = http.StatusForbidden, "denied "+a.Host
	case StatusTimeout:
		code = http.StatusGatewayTimeout
	}
	writeStatus(c, code, msg)
	w.report(res, a)
}

// tunnel relays raw bytes both ways after answering the CONNECT.
func (w *Witness) tunnel(c net.Conn, br *bufio.Reader, a Attempt) {
	up, res := w.open(a)
	if up == nil {
		w.refuse(c, res, a)
		return
	}
	defer w.release(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		res.Err = err.Error()
		w.report(res, a)
		return
	}
	// Sniffing the payload rather than peeking keeps server-speaks-first protocols working.
	fromChild := &tlsSniffer{r: br}
	var err error
	res.BytesOut, res.BytesIn, err = splice(c, fromChild, up, up)
	res.TLS = fromChild.tls
	if err != nil {
		res.Err = err.Error()
	}
	w.report(res, a)
}

// forward relays one request and its response, and reports whether the child
// connection can carry another request.
func (w *Witness) forward(c net.Conn, br *bufio.Reader, head []byte, req *http.Request, a Attempt) bool {
	up, res := w.open(a)
	if up == nil {
		w.refuse(c, res, a)
		return false
	}
	defer w.release(up)
	toUp := &countingWriter{w: up}
	toChild := &countingWriter{w: c}
	fromUp := bufio.NewReader(up)
	status, keep, err := relayExchange(toChild, toUp, br, fromUp, originForm(head), req)
	res.HTTPStatus, res.BytesOut, res.BytesIn = status, toUp.n, toChild.n
	if status == http.StatusSwitchingProtocols && err == nil {
		var out, in int64
		out, in, err = splice(c, br, up, fromUp)
		res.BytesOut += out
		res.BytesIn += in
	}
	if err != nil {
		res.Err = err.Error()
	}
	w.report(res, a)
	return keep
}

// denied reports whether host matches a normalised deny entry.
func denied(deny []string, host string) bool {
	for _, d := range deny {
		if suffix, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// wsaeConnRefused is WSAECONNREFUSED, Windows' errno for a refused
// connection: syscall.ECONNREFUSED is never returned there. No Unix errno
// has its number.
const wsaeConnRefused = syscall.Errno(10061)

// classify names how a dial failed.
func classify(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return StatusDNSFailure
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, wsaeConnRefused):
		return StatusRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return StatusTimeout
	default:
		return StatusError
	}
}

// tlsSniffer notes whether the first byte through it starts a TLS handshake
// record (content type 22); plaintext HTTP and SSH never start that way.
type tlsSniffer struct {
	r         io.Reader
	seen, tls bool
}

func (s *tlsSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 && !s.seen {
		s.seen, s.tls = true, p[0] == 0x16
	}
	return n, err
}
