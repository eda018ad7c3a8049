package witness

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// loopbackDial gives every *.example.test name the address 127.0.0.1, keeping
// the port, so tests show destinations by name without leaving the machine.
// slow.example.test times out; any other name does not resolve.
func loopbackDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	switch {
	case host == "slow.example.test":
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrDeadlineExceeded}
	case host != "127.0.0.1" && !strings.HasSuffix(host, ".example.test"):
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}

// recorder collects what a Witness reports.
type recorder struct {
	mu       sync.Mutex
	attempts []Attempt
	results  []Result
	done     chan struct{} // receives one value per result
}

func newRecorder() *recorder { return &recorder{done: make(chan struct{}, 100)} }

func (r *recorder) config(deny ...string) Config {
	return Config{
		Deny: deny,
		Dial: loopbackDial,
		OnAttempt: func(a Attempt) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.attempts = append(r.attempts, a)
		},
		OnResult: func(res Result) {
			r.mu.Lock()
			r.results = append(r.results, res)
			r.mu.Unlock()
			r.done <- struct{}{}
		},
	}
}

// wait blocks until n more results have arrived.
func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			attempts, results := r.snapshot()
			t.Fatalf("waited 20s for a result; got attempts %+v, results %+v", attempts, results)
		}
	}
}

func (r *recorder) snapshot() ([]Attempt, []Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Attempt(nil), r.attempts...), append([]Result(nil), r.results...)
}

func startWitness(t *testing.T, cfg Config) *Witness {
	t.Helper()
	w, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// proxyAddr is the witness address as the child would find it.
func proxyAddr(t *testing.T, w *Witness) string {
	t.Helper()
	for _, kv := range w.Env() {
		if u, ok := strings.CutPrefix(kv, "HTTP_PROXY=http://"); ok {
			return u
		}
	}
	t.Fatalf("no HTTP_PROXY in %q", w.Env())
	return ""
}

func dialProxy(t *testing.T, w *Witness) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr(t, w))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln := listen(t)
	p := port(t, ln.Addr().String())
	ln.Close()
	return p
}

// rawOrigin serves each accepted connection with handle.
func rawOrigin(t *testing.T, handle func(c net.Conn)) int {
	t.Helper()
	ln := listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				handle(c)
			}()
		}
	}()
	return port(t, ln.Addr().String())
}

func TestForwardRelaysBytesVerbatim(t *testing.T) {
	tests := []struct {
		name      string
		request   string // as the child sends it; PORT is replaced
		forwarded string // as the origin must receive it
		response  string // as the origin sends it, then closes
		keep      bool   // the child connection carries a next request
	}{
		{
			name:      "chunked request with extension and trailer",
			request:   "POST http://a.example.test:PORT/up?x=1 HTTP/1.1\r\nHost: a.example.test:PORT\r\nX-Odd-CASE:  spaced \r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer-X: t\r\n\r\n",
			forwarded: "POST /up?x=1 HTTP/1.1\r\nHost: a.example.test:PORT\r\nX-Odd-CASE:  spaced \r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer-X: t\r\n\r\n",
			response:  "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
			keep:      true,
		},
		{
			name:      "query without path, chunked response",
			request:   "GET http://a.example.test:PORT?q=1 HTTP/1.1\r\nHost: a.example.test:PORT\r\nProxy-Connection: keep-alive\r\n\r\n",
			forwarded: "GET /?q=1 HTTP/1.1\r\nHost: a.example.test:PORT\r\nProxy-Connection: keep-alive\r\n\r\n",
			response:  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
			keep:      true,
		},
		{
			name:      "content-length request body, LF-only lines",
			request:   "PUT http://a.example.test:PORT/ HTTP/1.1\nHost: a.example.test:PORT\nContent-Length: 4\n\nbody",
			forwarded: "PUT / HTTP/1.1\nHost: a.example.test:PORT\nContent-Length: 4\n\nbody",
			response:  "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			keep:      true,
		},
		{
			name:      "HEAD response has no body",
			request:   "HEAD http://a.example.test:PORT/h HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			forwarded: "HEAD /h HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			response:  "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
			keep:      true,
		},
		{
			name:      "204 has no body",
			request:   "DELETE http://a.example.test:PORT/d HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			forwarded: "DELETE /d HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			response:  "HTTP/1.1 204 No Content\r\n\r\n",
			keep:      true,
		},
		{
			name:      "body delimited by close",
			request:   "GET http://a.example.test:PORT/c HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			forwarded: "GET /c HTTP/1.1\r\nHost: a.example.test:PORT\r\n\r\n",
			response:  "HTTP/1.1 200 OK\r\n\r\nuntil close",
		},
		{
			name:      "child asks to close",
			request:   "GET http://a.example.test:PORT/ HTTP/1.1\r\nHost: a.example.test:PORT\r\nConnection: close\r\n\r\n",
			forwarded: "GET / HTTP/1.1\r\nHost: a.example.test:PORT\r\nConnection: close\r\n\r\n",
			response:  "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
		},
	}
	const second = "GET http://b.example.test:PORT/next HTTP/1.1\r\nHost: b.example.test:PORT\r\n\r\n"
	const secondForwarded = "GET /next HTTP/1.1\r\nHost: b.example.test:PORT\r\n\r\n"
	const secondResponse = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The test tells the origin how many bytes to expect, then checks them.
			expect, received := make(chan string, 1), make(chan string, 1)
			p := rawOrigin(t, func(c net.Conn) {
				want, resp := (<-expect), tt.response
				if strings.Contains(want, "/next") {
					resp = secondResponse
				}
				got := make([]byte, len(want))
				n, _ := io.ReadFull(c, got)
				received <- string(got[:n])
				io.WriteString(c, resp)
			})
			ps := strconv.Itoa(p)
			forwarded := strings.ReplaceAll(tt.forwarded, "PORT", ps)
			rec := newRecorder()
			w := startWitness(t, rec.config())
			c := dialProxy(t, w)

			expect <- forwarded
			io.WriteString(c, strings.ReplaceAll(tt.request, "PORT", ps))
			got := make([]byte, len(tt.response))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != tt.response {
				t.Fatalf("child got %q, %v; want %q", got, err, tt.response)
			}
			if r := <-received; r != forwarded {
				t.Errorf("origin got %q, want %q", r, forwarded)
			}
			rec.wait(t, 1)
			attempts, results := rec.snapshot()
			a := attempts[0]
			start := a.Start
			a.Start = time.Time{}
			wantAttempt := Attempt{ID: "egress-1", Host: "a.example.test", Port: p, Scheme: "http", Method: strings.Fields(tt.request)[0]}
			if start.IsZero() || a != wantAttempt {
				t.Errorf("attempt = %+v, want %+v with a start time", attempts[0], wantAttempt)
			}
			status, _ := strconv.Atoi(strings.Fields(tt.response)[1])
			res := results[0]
			if res.ID != "egress-1" || res.Status != StatusConnected || res.HTTPStatus != status ||
				res.BytesOut != int64(len(forwarded)) || res.BytesIn != int64(len(tt.response)) || res.Err != "" {
				t.Errorf("result = %+v, want connected, HTTP %d, %d bytes out, %d in", res, status, len(forwarded), len(tt.response))
			}

			if !tt.keep {
				if n, err := c.Read(make([]byte, 1)); err != io.EOF {
					t.Errorf("after the response child read %d bytes, %v; want EOF", n, err)
				}
				return
			}
			expect <- strings.ReplaceAll(secondForwarded, "PORT", ps)
			io.WriteString(c, strings.ReplaceAll(second, "PORT", ps))
			if r, want := <-received, strings.ReplaceAll(secondForwarded, "PORT", ps); r != want {
				t.Errorf("origin got %q, want %q", r, want)
			}
			got = make([]byte, len(secondResponse))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != secondResponse {
				t.Fatalf("second response %q, %v; want %q", got, err, secondResponse)
			}
			rec.wait(t, 1)
			attempts, _ = rec.snapshot()
			if len(attempts) != 2 || attempts[1].Host != "b.example.test" || attempts[1].ID != "egress-2" {
				t.Errorf("attempts = %+v, want a second for b.example.test as egress-2", attempts)
			}
		})
	}
}

func TestForwardExpectContinue(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(rw, r.Body) // reading the body makes net/http send 100 Continue
	}))
	defer origin.Close()
	p := port(t, origin.Listener.Addr().String())
	rec := newRecorder()
	w := startWitness(t, rec.config())
	c := dialProxy(t, w)

	host := "a.example.test:" + strconv.Itoa(p)
	io.WriteString(c, "PUT http://"+host+"/x HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("first line %q, %v; want HTTP/1.1 100 Continue before the body", line, err)
	}
	if blank, _ := br.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("after 100 got %q, want an empty line", blank)
	}
	io.WriteString(c, "hello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Errorf("response %d %q, want 200 %q", resp.StatusCode, body, "hello")
	}
	rec.wait(t, 1)
	if _, results := rec.snapshot(); results[0].HTTPStatus != 200 || results[0].Err != "" {
		t.Errorf("result = %+v, want HTTP 200 without error", results[0])
	}
}

func TestForwardUpgrade(t *testing.T) {
	const switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"
	p := rawOrigin(t, func(c net.Conn) {
		if _, err := readHead(bufio.NewReader(c), true); err != nil {
			return
		}
		io.WriteString(c, switching)
		io.Copy(c, c)
	})
	rec := newRecorder()
	w := startWitness(t, rec.config())
	c := dialProxy(t, w)

	host := "ws.example.test:" + strconv.Itoa(p)
	request := "GET http://" + host + "/echo HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"
	io.WriteString(c, request)
	got := make([]byte, len(switching)+4)
	n, err := io.ReadFull(c, got[:len(switching)])
	if err == nil {
		io.WriteString(c, "ping")
		_, err = io.ReadFull(c, got[n:])
	}
	if want := switching + "ping"; err != nil || string(got) != want {
		t.Fatalf("child got %q, %v; want %q", got, err, want)
	}
	c.(*net.TCPConn).CloseWrite()
	rec.wait(t, 1)
	_, results := rec.snapshot()
	wantOut := int64(len(request) - len("http://"+host) + 4)
	if r := results[0]; r.HTTPStatus != 101 || r.BytesOut != wantOut || r.BytesIn != int64(len(switching)+4) {
		t.Errorf("result = %+v, want HTTP 101, %d bytes out, %d in", r, wantOut, len(switching)+4)
	}
}

func TestTunnel(t *testing.T) {
	p := rawOrigin(t, func(c net.Conn) { io.Copy(c, c) })
	rec := newRecorder()
	w := startWitness(t, rec.config())
	c := dialProxy(t, w)

	// The first payload rides in the same write as the CONNECT, as eager clients do.
	host := "echo.example.test:" + strconv.Itoa(p)
	io.WriteString(c, "CONNECT "+host+" HTTP/1.1\r\nHost: "+host+"\r\n\r\nearly")
	const established = "HTTP/1.1 200 Connection established\r\n\r\n"
	got := make([]byte, len(established)+len("early"))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != established+"early" {
		t.Fatalf("child got %q, %v; want %q", got, err, established+"early")
	}
	io.WriteString(c, "more")
	got = make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "more" {
		t.Fatalf("echo %q, %v; want %q", got, err, "more")
	}
	c.(*net.TCPConn).CloseWrite()
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after half-close child read %d bytes, %v; want EOF", n, err)
	}
	rec.wait(t, 1)
	attempts, results := rec.snapshot()
	if a := attempts[0]; a.Host != "echo.example.test" || a.Port != p || a.Scheme != "connect" || a.Method != "CONNECT" {
		t.Errorf("attempt = %+v, want echo.example.test:%d connect CONNECT", a, p)
	}
	if r := results[0]; r.Status != StatusConnected || r.HTTPStatus != 0 || r.BytesOut != 9 || r.BytesIn != 9 || r.Err != "" || r.Duration <= 0 || r.TLS {
		t.Errorf("result = %+v, want connected, no HTTP status, 9 bytes each way, not TLS", r)
	}
}

func TestRefusedAttempts(t *testing.T) {
	closed := closedPort(t)
	tests := []struct {
		name, method, host string
		wantCode           int
		wantStatus         string
	}{
		{"refused tunnel", "CONNECT", "closed.example.test", 502, StatusRefused},
		{"refused request", "GET", "closed.example.test", 502, StatusRefused},
		{"unresolvable tunnel", "CONNECT", "nowhere.invalid", 502, StatusDNSFailure},
		{"unresolvable request", "GET", "nowhere.invalid", 502, StatusDNSFailure},
		{"denied tunnel", "CONNECT", "x.blocked.example.test", 403, StatusDenied},
		{"denied request", "GET", "Exact.Example.Test.", 403, StatusDenied},
		{"dial timeout", "CONNECT", "slow.example.test", 504, StatusTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			w := startWitness(t, rec.config("*.blocked.example.test", "exact.example.test"))
			c := dialProxy(t, w)
			target := tt.host + ":" + strconv.Itoa(closed)
			if tt.method == "CONNECT" {
				io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
			} else {
				io.WriteString(c, "GET http://"+target+"/ HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode {
				t.Errorf("%s %s: HTTP %d, want %d", tt.method, target, resp.StatusCode, tt.wantCode)
			}
			rec.wait(t, 1)
			attempts, results := rec.snapshot()
			if len(attempts) != 1 || results[0].Status != tt.wantStatus || results[0].ID != attempts[0].ID || results[0].BytesOut != 0 {
				t.Errorf("%s %s: attempts %+v, results %+v; want one attempt, status %s, nothing sent", tt.method, target, attempts, results, tt.wantStatus)
			}
		})
	}
}

func TestMalformedRequestsAreNotAttempts(t *testing.T) {
	tests := []string{
		"GET /origin-form HTTP/1.1\r\nHost: a.example.test\r\n\r\n",
		"GET https://a.example.test/ HTTP/1.1\r\nHost: a.example.test\r\n\r\n",
		"CONNECT a.example.test HTTP/1.1\r\n\r\n",
		"CONNECT a.example.test:0 HTTP/1.1\r\n\r\n",
		"not http at all\r\n\r\n",
	}
	for _, request := range tests {
		rec := newRecorder()
		w := startWitness(t, rec.config())
		c := dialProxy(t, w)
		io.WriteString(c, request)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 400 {
			t.Errorf("request %q: response %v, %v; want 400", request, resp, err)
		}
		w.Close()
		if attempts, results := rec.snapshot(); len(attempts)+len(results) != 0 {
			t.Errorf("request %q: attempts %+v, results %+v; want none", request, attempts, results)
		}
	}
}

func TestCloseEndsOpenTunnels(t *testing.T) {
	p := rawOrigin(t, func(c net.Conn) { io.Copy(c, c) })
	rec := newRecorder()
	w := startWitness(t, rec.config())
	c := dialProxy(t, w)
	host := "echo.example.test:" + strconv.Itoa(p)
	io.WriteString(c, "CONNECT "+host+" HTTP/1.1\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v, %v; want 200", resp, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close returns only after OnResult, so no waiting here.
	if _, results := rec.snapshot(); len(results) != 1 || !strings.HasPrefix(results[0].Err, "witness closed") {
		t.Errorf("results at Close = %+v, want one ending in witness closed", results)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("child tunnel still open after Close")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

func TestEnvPointsAtWitness(t *testing.T) {
	w := startWitness(t, Config{})
	env := map[string]string{}
	for _, kv := range w.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	u := "http://" + proxyAddr(t, w)
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		if env[k] != u {
			t.Errorf("%s = %q, want %q", k, env[k], u)
		}
	}
	for k, want := range map[string]string{"NODE_USE_ENV_PROXY": "1", "NO_PROXY": "", "no_proxy": ""} {
		if v, ok := env[k]; !ok || v != want {
			t.Errorf("%s = %q (set %v), want %q", k, v, ok, want)
		}
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("proxy URL %q, want loopback", u)
	}
}

func TestDenied(t *testing.T) {
	deny := []string{"tracker.example.test", "*.corp.test", "10.0.0.1"}
	tests := []struct {
		host string
		want bool
	}{
		{"tracker.example.test", true},
		{"api.tracker.example.test", false},
		{"a.corp.test", true},
		{"a.b.corp.test", true},
		{"corp.test", false},
		{"evilcorp.test", false},
		{"10.0.0.1", true},
		{"10.0.0.10", false},
	}
	for _, tt := range tests {
		if got := denied(deny, tt.host); got != tt.want {
			t.Errorf("denied(%q, %q) = %v, want %v", deny, tt.host, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, StatusDNSFailure},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, StatusRefused},
		{&net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}, StatusTimeout},
		{context.DeadlineExceeded, StatusTimeout},
		{context.Canceled, StatusError},
		{errors.New("boom"), StatusError},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
