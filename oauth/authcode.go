package oauth

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/oauth2"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// redirectListener listens for the authorization response on the loopback
// interface (RFC 8252 §7.3: "Loopback Interface Redirection"; §8.3: "It is
// RECOMMENDED that clients attempting to bind to the loopback interface use
// the IP literal rather than localhost"). It tries the port asked for
// first, which a registration or a metadata document may name, then any.
func redirectListener(want string) (net.Listener, string, error) {
	if want != "" {
		if u, err := url.Parse(want); err == nil && strings.EqualFold(u.Hostname(), "localhost") {
			ln, err := listenLocalhost(u.Port())
			if err != nil {
				return nil, "", err
			}
			if ln != nil {
				return ln, want, nil
			}
		} else if err == nil {
			if ln, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), u.Port())); err == nil {
				return ln, want, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("listening on the loopback interface for the browser's redirect: %w", err)
	}
	return ln, "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + callbackPath, nil
}

// listenLocalhost listens on port at both loopback addresses: a browser
// resolves localhost to ::1 or to 127.0.0.1, and another process on the
// one not bound would take the redirect and its code. It refuses when
// another process holds [::1] at the port; nil, nil when 127.0.0.1 is not
// free either (the caller takes any port, as for an IP literal).
func listenLocalhost(port string) (net.Listener, error) {
	v4, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return nil, nil
	}
	v6, err := net.Listen("tcp", net.JoinHostPort("::1", port))
	switch {
	case err == nil:
		return newBothListener(v4, v6), nil
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EAFNOSUPPORT):
		return v4, nil // no IPv6 loopback here: nobody can listen there either
	}
	v4.Close()
	return nil, fmt.Errorf("the redirect URI names localhost, and [::1]:%s is taken by another process (%v): a browser that resolves localhost to ::1 would hand it the sign-in's code; stop that process, or register http://127.0.0.1:%s%s (the IP literal RFC 8252 §8.3 recommends) and pass it to --oauth-redirect-uri", port, err, port, callbackPath)
}

// bothListener accepts on two listeners, and Close closes both.
type bothListener struct {
	lns   [2]net.Listener
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newBothListener(a, b net.Listener) *bothListener {
	l := &bothListener{lns: [2]net.Listener{a, b}, conns: make(chan net.Conn), done: make(chan struct{})}
	for _, ln := range l.lns {
		// Hands over each connection; returns when ln is closed.
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				select {
				case l.conns <- c:
				case <-l.done:
					c.Close()
					return
				}
			}
		}()
	}
	return l
}

func (l *bothListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *bothListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.lns[0].Close()
		l.lns[1].Close()
	})
	return nil
}

func (l *bothListener) Addr() net.Addr { return l.lns[0].Addr() }

// authResponse is the query of the redirect (RFC 6749 §4.1.2, RFC 9207 §2).
type authResponse struct {
	code, iss, err, desc string
	hasIss               bool
}

// The redirect listener's bounds.
const (
	maxCallback = 8 << 10
	maxCallers  = 8
	callerWait  = 10 * time.Second
)

// waitRedirect serves the redirect URI, calls ready (which sends the person
// to the authorization URL), and waits until an authorization response with
// the expected state arrives. A response with another state is answered 400
// and ignored: "discard any results that do not include or have a mismatch
// with the original state" (2025-11-25, Open Redirection).
//
// It reads each request with http.ReadRequest and writes the answer by hand:
// an http.Server would add ~0.9 MB (its HTTP/2 server) to the binary for
// one GET.
func waitRedirect(ctx context.Context, ln net.Listener, redirect, state string, ready func()) (authResponse, error) {
	ru, _ := url.Parse(redirect)
	got := make(chan authResponse, 1)
	// Any local process can reach the listener: a caller has callerWait to
	// send its request, whose head may be maxCallback bytes (a redirect's is
	// a few hundred) and whose body is never read; maxCallers are served at
	// once, others are closed at once; one authorization response is taken.
	slots := make(chan struct{}, maxCallers)
	var taken atomic.Bool
	// The accept loop: returns when the listener is closed below.
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case slots <- struct{}{}:
			default:
				conn.Close()
				continue
			}
			// One request per connection: returns when it is answered.
			go func() {
				defer func() { <-slots }()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(callerWait))
				r, err := http.ReadRequest(bufio.NewReaderSize(io.LimitReader(conn, maxCallback), 4096))
				if err != nil {
					return
				}
				status, page := callback(r, ru.Path, state, got, &taken)
				fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n%s",
					status, http.StatusText(status), len(page), page)
			}()
		}
	}()
	defer ln.Close()
	ready()
	select {
	case r := <-got:
		return r, nil
	case <-ctx.Done():
		return authResponse{}, ctx.Err()
	}
}

// callback answers one request to the redirect listener, and hands an
// authorization response with the right state to got.
func callback(r *http.Request, path, state string, got chan<- authResponse, taken *atomic.Bool) (int, string) {
	const page = "<!doctype html><title>mcpshim</title><p>mcpshim: %s</p>"
	if r.Method != http.MethodGet || r.URL.Path != path {
		return http.StatusNotFound, fmt.Sprintf(page, "nothing here.")
	}
	q := r.URL.Query()
	if q.Get("state") != state {
		return http.StatusBadRequest, fmt.Sprintf(page, "this sign-in response does not carry the state mcpshim sent; it was ignored.")
	}
	resp := authResponse{code: q.Get("code"), iss: q.Get("iss"), hasIss: q.Has("iss"), err: q.Get("error"), desc: q.Get("error_description")}
	if !taken.CompareAndSwap(false, true) {
		return http.StatusConflict, fmt.Sprintf(page, "a sign-in response was already received; this one was ignored.")
	}
	got <- resp
	if resp.err != "" || resp.code == "" {
		return http.StatusOK, fmt.Sprintf(page, "the sign-in did not complete. The terminal running mcpshim says why.")
	}
	return http.StatusOK, fmt.Sprintf(page, "signed in. You can close this tab.")
}

// checkIss applies RFC 9207 §2.4 as the 2026-07-28 table says: a present iss
// is compared to the recorded issuer by simple string comparison whether or
// not the server advertises it; an absent one is refused only when the server
// advertises authorization_response_iss_parameter_supported. "on mismatch the
// client MUST NOT act on or display error, error_description, or error_uri",
// so this runs before the error is read.
func checkIss(r authResponse, m *ServerMetadata) error {
	switch {
	case r.hasIss && r.iss != m.Issuer:
		return fmt.Errorf("the authorization response came from issuer %q, not %q: refused (RFC 9207)", r.iss, m.Issuer)
	case !r.hasIss && m.IssParameterSupported:
		return fmt.Errorf("the authorization server %s advertises the iss parameter but its response has none: refused (RFC 9207)", m.Issuer)
	}
	return nil
}

// randomState is an unguessable state value.
func randomState() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorizationURL is the authorization request (RFC 6749 §4.1.1) with PKCE
// S256 (RFC 7636) and the resource indicator (RFC 8707).
func authorizationURL(tg *target, c *Client, scopes []string, state, verifier string) (string, error) {
	u, err := url.Parse(tg.as.AuthorizationEndpoint)
	if err != nil {
		return "", fmt.Errorf("authorization_endpoint %q: %w", tg.as.AuthorizationEndpoint, err)
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", c.RedirectURI)
	q.Set("state", state)
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(verifier))
	q.Set("code_challenge_method", "S256")
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	if tg.resource != "" {
		q.Set("resource", tg.resource)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// authorizeCode runs the browser step and the code exchange. ln is already
// listening on c.RedirectURI.
func (s *Session) authorizeCode(ctx context.Context, tg *target, c *Client, ln net.Listener, scopes []string) (*Token, error) {
	state := randomState()
	verifier := oauth2.GenerateVerifier()
	authURL, err := authorizationURL(tg, c, scopes, state, verifier)
	if err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, s.cfg.BrowserWait)
	defer cancel()
	r, err := waitRedirect(wait, ln, c.RedirectURI, state, func() { s.show(wait, authURL) })
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, &FlowError{Stage: StageAuthorization, Err: fmt.Errorf("no answer from the browser within %v: open the URL printed above, or run mcpshim auth login --url %s", s.cfg.BrowserWait, s.shown())}
		}
		return nil, &FlowError{Stage: StageAuthorization, Err: err}
	}
	if err := checkIss(r, tg.as); err != nil {
		return nil, &FlowError{Stage: StageAuthorization, Code: "iss_mismatch", Err: err}
	}
	if r.err != "" {
		return nil, &FlowError{Stage: StageAuthorization, Code: r.err, Description: r.desc, Err: fmt.Errorf("the authorization server refused: %s", r.err)}
	}
	if r.code == "" {
		return nil, &FlowError{Stage: StageAuthorization, Err: errors.New("the authorization response carries no code")}
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {r.code}, "redirect_uri": {c.RedirectURI}, "code_verifier": {verifier}}
	t, err := s.tokenRequest(ctx, tg, c, form)
	if err != nil {
		return nil, &FlowError{Stage: StageToken, Err: err}
	}
	// RFC 6749 §4.1.3 has no scope on the code exchange: when the server
	// does not say what it granted, the token has what was asked for.
	if t.Scope == "" {
		t.Scope = strings.Join(scopes, " ")
	}
	return t, nil
}
