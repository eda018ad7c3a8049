package oauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/redact"
)

// The grants a Session can use.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is RFC 7523 §2.1: a workload's own identity token,
	// issued by another party, as the grant (the MCP workload identity
	// federation extension).
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// GrantIDJAG is the enterprise-managed authorization extension (SEP-990):
	// the person's ID token from the enterprise identity provider is
	// exchanged there (RFC 8693) for an identity assertion grant (ID-JAG),
	// which the JWT-bearer grant presents to the server's authorization server.
	GrantIDJAG = "id-jag"
)

// Config is what a Session is given.
type Config struct {
	// Server is the MCP endpoint.
	Server *url.URL
	// ClientID and ClientSecret are a pre-registered client
	// (--oauth-client-id, --oauth-client-secret); ClientMetadataURL is the
	// client's metadata document (--oauth-client-metadata-url); RedirectURI
	// is the loopback redirect a pre-registered client was registered with.
	ClientID, ClientSecret, ClientMetadataURL, RedirectURI string
	// ClientKey signs private_key_jwt assertions for a pre-registered client
	// (--oauth-client-key).
	ClientKey crypto.Signer
	// Grant is GrantAuthorizationCode (the default), GrantClientCredentials
	// or GrantJWTBearer.
	Grant string
	// AssertionFile holds the workload's token for GrantJWTBearer, or the ID
	// token from the identity provider for GrantIDJAG.
	AssertionFile string
	// IDPTokenEndpoint and IDPClientID are the enterprise identity
	// provider's token endpoint and this client's id there (GrantIDJAG).
	IDPTokenEndpoint, IDPClientID string
	// Store keeps tokens across runs; nil keeps them in memory only.
	Store *Store
	// Timeout bounds each HTTP request to the servers (default 30 s).
	Timeout time.Duration
	// BrowserWait bounds the wait for the browser's redirect (default 5 min).
	BrowserWait time.Duration
	// Open shows the authorization URL; nil opens the browser (OpenBrowser).
	Open func(ctx context.Context, url string) error
	// Prompt is where the authorization URL is printed (stderr); nil: nowhere.
	Prompt io.Writer
	// Getenv reads $BROWSER; nil: os.Getenv.
	Getenv func(string) string
	// Notify is told every step; it must not block.
	Notify func(Step)
	// ProtocolVersion is sent as MCP-Protocol-Version on metadata requests.
	ProtocolVersion string
	// HTTP is the client for the sign-in's requests; nil: one with Timeout.
	// Its redirect rule is replaced by the bridge's (redirectRule).
	HTTP *http.Client
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Step events, named as the ledger names them.
const (
	StepRequired   = "auth_required"
	StepStarted    = "authorization_started"
	StepAuthorized = "authorized"
	StepRefreshed  = "token_refreshed"
	StepFailed     = "auth_failed"
)

// Stages: where a sign-in stopped.
const (
	StageResourceMetadata = "resource_metadata"
	StageServerMetadata   = "server_metadata"
	StageRegistration     = "registration"
	StageAuthorization    = "authorization"
	StageToken            = "token"
	StageRefresh          = "refresh"
	StageScope            = "scope"
	StageStore            = "store"
)

// Step is one step of a sign-in, for the ledger and stderr. No field ever
// holds a code, a token, a secret or a verifier; Description is the
// server's own text and must be redacted like any other server text.
type Step struct {
	Event      string
	Status     int    // the HTTP status that asked for authorization
	Stage      string // auth_failed: where it stopped
	Issuer     string
	Resource   string
	Scope      string
	Grant      string
	ClientKind string
	ClientID   string
	Error      string // the server's error code, or the challenge's
	// Description is the server's error_description.
	Description string
	// Message is mcpshim's sentence: what happened and what to run.
	Message   string
	ExpiresIn time.Duration
	// Refresh: authorized with a refresh token; Rotated: a refresh that
	// replaced the refresh token.
	Refresh, Rotated bool
}

// FlowError is a sign-in that stopped: where, the server's error, and why.
type FlowError struct {
	Stage       string
	Code        string
	Description string
	Err         error
}

func (e *FlowError) Error() string {
	s := e.Err.Error()
	if e.Description != "" {
		s += " (" + e.Description + ")"
	}
	return s
}

func (e *FlowError) Unwrap() error { return e.Err }

// Session is the sign-in to one server with one client identity. It is safe
// for concurrent use: one sign-in runs at a time, and requests refused
// meanwhile wait for it.
type Session struct {
	cfg Config
	// key is the server in the store (StoreKey); clientKey the client.
	key, clientKey string
	hc, post       *http.Client

	mu  sync.Mutex
	rec *Record
	// kept is the store file's stamp when rec was read or written there;
	// signedOut: the store lost the sign-in rec had (mcpshim auth logout).
	kept      stamp
	signedOut bool
	// dead is the refresh token the authorization server refused: the
	// store keeps it (see refresh), this Session no longer takes it.
	dead string
	// running is the sign-in under way, nil when none.
	running *flowRun
	// untaken counts the sign-ins (and refreshes after a refusal) since the
	// server last took a token of this Session's: maxUntaken of them and it
	// stops (a server that refuses every token opened 8 browsers for 5
	// messages). A token the server takes, or one another process signed
	// in, starts the count again.
	untaken int
	// refreshed is the access token the last refresh produced: a 401 for it
	// means a refresh does not help.
	refreshed string
	// local is the lock of a Session without a store.
	local chan struct{}
	// asNonce and rsNonce are the DPoP nonces the servers gave last.
	asNonce, rsNonce string

	hidden secrets // Secrets (secrets.go)
	hideMu sync.Mutex
}

func (s *Session) nonce(n *string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *n
}

func (s *Session) setNonce(n *string, v string) {
	s.mu.Lock()
	*n = v
	s.mu.Unlock()
}

type flowRun struct {
	done chan struct{}
	err  error
}

// New starts a Session from what the store kept.
func New(cfg Config) (*Session, error) {
	if cfg.Server == nil {
		return nil, errors.New("oauth: no server URL")
	}
	switch cfg.Grant {
	case "":
		cfg.Grant = GrantAuthorizationCode
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if cfg.ClientID == "" || (cfg.ClientSecret == "" && cfg.ClientKey == nil) {
			return nil, errors.New("--oauth-grant client_credentials needs a pre-registered client: --oauth-client-id, and --oauth-client-secret or --oauth-client-key")
		}
	case "jwt-bearer", GrantJWTBearer:
		cfg.Grant = GrantJWTBearer
		if cfg.ClientID == "" || cfg.AssertionFile == "" {
			return nil, errors.New("--oauth-grant jwt-bearer needs --oauth-client-id and --oauth-assertion-file (the workload's identity token)")
		}
	case GrantIDJAG:
		if cfg.ClientID == "" || cfg.AssertionFile == "" || cfg.IDPTokenEndpoint == "" {
			return nil, errors.New("--oauth-grant id-jag needs --oauth-client-id (and its secret), --oauth-assertion-file (the ID token) and --oauth-idp-token-endpoint")
		}
	default:
		return nil, fmt.Errorf("--oauth-grant %q: want authorization_code, client_credentials, jwt-bearer or id-jag", cfg.Grant)
	}
	if cfg.ClientMetadataURL != "" {
		u, err := url.Parse(cfg.ClientMetadataURL)
		// "The client_id URL MUST use the "https" scheme and contain a path component".
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return nil, fmt.Errorf("--oauth-client-metadata-url %q: want an https URL with a path, e.g. https://example.com/mcpshim-client.json", cfg.ClientMetadataURL)
		}
	}
	if cfg.RedirectURI != "" {
		u, err := url.Parse(cfg.RedirectURI)
		if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) || u.Port() == "" {
			return nil, fmt.Errorf("--oauth-redirect-uri %q: want a loopback URL with a port, e.g. http://127.0.0.1:8765/callback", cfg.RedirectURI)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.BrowserWait <= 0 {
		cfg.BrowserWait = 5 * time.Minute
	}
	s := &Session{cfg: cfg, key: StoreKey(cfg.Server), clientKey: ClientKey(cfg.ClientID, cfg.ClientMetadataURL), local: make(chan struct{}, 1)}
	hc := http.Client{Timeout: cfg.Timeout}
	if cfg.HTTP != nil {
		hc = *cfg.HTTP
	}
	hc.CheckRedirect = redirectRule(false)
	post := hc
	post.CheckRedirect = redirectRule(true)
	s.hc, s.post = &hc, &post
	s.rec = &Record{Version: 1, Server: s.key, ClientKey: s.clientKey}
	if cfg.Store != nil {
		if err := cfg.Store.move(cfg.Server.String(), s.key, s.clientKey); err != nil {
			return nil, err
		}
		st := cfg.Store.stamp(s.key, s.clientKey)
		r, err := cfg.Store.Load(s.key, s.clientKey)
		if err != nil {
			return nil, err
		}
		s.rec, s.kept = r, st
	}
	s.hide(cfg.ClientSecret)
	s.hideRecord(s.rec)
	return s, nil
}

// shown is the server's URL as messages show it: no userinfo, query
// values hidden.
func (s *Session) shown() string { return redact.URL(s.cfg.Server) }

func (s *Session) http() *http.Client       { return s.hc }
func (s *Session) postClient() *http.Client { return s.post }

func (s *Session) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func (s *Session) getenv(k string) string {
	if s.cfg.Getenv != nil {
		return s.cfg.Getenv(k)
	}
	return os.Getenv(k)
}

func (s *Session) notify(st Step) {
	if st.Grant == "" {
		st.Grant = s.cfg.Grant
	}
	s.mu.Lock()
	notify := s.cfg.Notify
	s.mu.Unlock()
	if notify != nil {
		notify(st)
	}
}

// failed reports a sign-in that stopped and returns its error.
func (s *Session) failed(status int, err error) error {
	st := Step{Event: StepFailed, Status: status, Message: err.Error(), Issuer: s.record().Issuer}
	var fe *FlowError
	if errors.As(err, &fe) {
		st.Stage, st.Error, st.Description, st.Message = fe.Stage, fe.Code, fe.Description, fe.Err.Error()
	}
	var te *TokenError
	if errors.As(err, &te) && st.Error == "" {
		st.Error, st.Description = te.Code, te.Description
	}
	s.notify(st)
	return err
}

func (s *Session) record() *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec
}

// Header is the Authorization header for the next request, "" before any
// sign-in. An expired token is refreshed first when it can be; when the
// refresh fails the server's 401 leads to Challenged.
func (s *Session) Header(ctx context.Context) string {
	s.follow()
	rec := s.record()
	t := rec.Token
	if t == nil {
		return ""
	}
	if t.expired(s.now()) && (t.RefreshToken != "" || machine(rec.Grant)) {
		s.refresh(ctx, 0) // a failure is reported; a refused token is forgotten
		t = s.record().Token
	}
	if t == nil {
		return ""
	}
	return scheme(t) + " " + t.AccessToken
}

func scheme(t *Token) string {
	if t.TokenType == "DPoP" {
		return "DPoP"
	}
	return "Bearer"
}

// Proof is the DPoP header for a request to the MCP server with method
// and URL, "" unless the token is DPoP-bound (RFC 9449 §7.1): a fresh
// proof per request, with the token's hash and the server's last nonce.
func (s *Session) Proof(method, target string) string {
	t := s.record().Token
	if t == nil || t.DPoPKey == nil {
		return ""
	}
	return dpopProof(t.DPoPKey, method, target, s.nonce(&s.rsNonce), t.AccessToken, time.Now())
}

// Challenged handles a 401 or 403 answer to a request sent with the
// Authorization header sent ("" for none): it refreshes, signs in or steps
// up, and returns nil when the request may be sent again with Header. One
// sign-in runs at a time; it goes on when ctx ends, until its own deadline,
// so that a client that gave up finds the token the next time.
func (s *Session) Challenged(ctx context.Context, status int, h http.Header, sent string) error {
	ch, _ := Bearer(h.Values("Www-Authenticate"))
	// RFC 9449 §9: a DPoP server asks for its nonce; the request is sent
	// again with a proof that carries it.
	if n := h.Get("DPoP-Nonce"); n != "" && ch.Param("error") == "use_dpop_nonce" && s.nonce(&s.rsNonce) != n {
		s.setNonce(&s.rsNonce, n)
		return nil
	}
	s.notify(Step{Event: StepRequired, Status: status, Scope: ch.Param("scope"), Error: ch.Param("error"), Description: ch.Param("error_description")})
	s.mu.Lock()
	if cur := s.headerLocked(); cur != sent && cur != "" {
		s.mu.Unlock()
		return nil // another request's sign-in already replaced the token
	}
	f := s.running
	if f == nil && s.untaken >= maxUntaken {
		s.mu.Unlock()
		return s.failed(status, &FlowError{Stage: StageAuthorization, Code: ch.Param("error"), Description: ch.Param("error_description"),
			Err: fmt.Errorf("mcpshim stopped signing in to %s: the server took none of the last %d tokens this shim got (HTTP %d each time), and another sign-in would not help: check that the account may use this server, then sign in with mcpshim auth login --url %s (this shim takes that token)", s.shown(), maxUntaken, status, s.shown())})
	}
	if f == nil {
		s.untaken++
		f = &flowRun{done: make(chan struct{})}
		s.running = f
		flowCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.BrowserWait+2*s.cfg.Timeout)
		// The sign-in: returns when it succeeds, fails or times out.
		go func() {
			defer cancel()
			err := s.reauthorize(flowCtx, status, ch, sent)
			if err != nil {
				s.failed(status, err)
			}
			s.mu.Lock()
			s.running = nil
			f.err = err
			s.mu.Unlock()
			close(f.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("authorization is still under way (finish it in the browser, or run mcpshim auth login --url %s): %w", s.shown(), ctx.Err())
	}
}

// maxUntaken bounds the sign-ins in a row whose token the server does not
// take (Session.untaken).
const maxUntaken = 3

// Accepted tells the Session that the server took a request sent with the
// Authorization header sent (any answer but a 401 or 403).
func (s *Session) Accepted(sent string) {
	s.mu.Lock()
	if sent != "" && sent == s.headerLocked() {
		s.untaken = 0
	}
	s.mu.Unlock()
}

func (s *Session) headerLocked() string {
	if s.rec.Token == nil {
		return ""
	}
	return scheme(s.rec.Token) + " " + s.rec.Token.AccessToken
}

// Login signs in afresh whatever the store holds: mcpshim auth login.
// wwwAuthenticate is the server's challenge to an unauthenticated request,
// when it gave one.
func (s *Session) Login(ctx context.Context, status int, wwwAuthenticate []string) error {
	ch, _ := Bearer(wwwAuthenticate)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		s.notify(Step{Event: StepRequired, Status: status, Scope: ch.Param("scope"), Error: ch.Param("error"), Description: ch.Param("error_description")})
	}
	if err := s.authorize(ctx, status, ch, false); err != nil {
		return s.failed(status, err)
	}
	return nil
}

// reauthorize decides between a refresh, a step-up and a new sign-in.
func (s *Session) reauthorize(ctx context.Context, status int, ch Challenge, sent string) error {
	stepUp := status == http.StatusForbidden && ch.Param("error") == "insufficient_scope"
	if status == http.StatusForbidden && !stepUp {
		return &FlowError{Stage: StageScope, Code: ch.Param("error"), Description: ch.Param("error_description"),
			Err: fmt.Errorf("the server refused the request (HTTP 403) and asked for no scope: signing in again cannot help")}
	}
	if s.isSignedOut() {
		return s.signedOutError()
	}
	rec := s.record()
	if stepUp {
		want := strings.Fields(ch.Param("scope"))
		granted := []string{}
		if rec.Token != nil {
			granted = strings.Fields(rec.Token.Scope)
		}
		// "SHOULD track scope upgrade attempts to avoid repeated failures for
		// the same resource and operation combination": a scope already
		// asked for and granted is not asked for again.
		if len(want) > 0 && subset(want, union(rec.Scopes, granted)) && sent != "" {
			return &FlowError{Stage: StageScope, Code: "insufficient_scope", Description: ch.Param("error_description"),
				Err: fmt.Errorf("the server still wants scope %q, which was already asked for: the account may lack it; sign in as another user with mcpshim auth login --url %s", ch.Param("scope"), s.shown())}
		}
		return s.authorize(ctx, status, ch, true)
	}
	// A 401 for a token: try a refresh when the authorization server is
	// still the one that issued it and this token is not a refresh's own.
	if sent != "" && rec.Token != nil && (rec.Token.RefreshToken != "" || machine(rec.Grant)) && !strings.HasSuffix(sent, " "+s.refreshedToken()) {
		if s.sameIssuer(ctx, ch) {
			if err := s.refresh(ctx, status); err == nil {
				return nil
			}
		}
	}
	return s.authorize(ctx, status, ch, false)
}

func (s *Session) refreshedToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshed
}

// sameIssuer tells whether the server's resource metadata still names the
// issuer the stored token came from (2026-07-28, Authorization Server
// Binding: "When the authorization server changes ... clients MUST NOT reuse
// client credentials from a different authorization server").
func (s *Session) sameIssuer(ctx context.Context, ch Challenge) bool {
	rec := s.record()
	prm, err := s.resourceMetadata(ctx, ch.Param("resource_metadata"))
	if errors.Is(err, errNoResourceMetadata) {
		return rec.Issuer == origin(s.cfg.Server)
	}
	return err == nil && slices.Contains(prm.AuthorizationServers, rec.Issuer)
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// Running is closed when the sign-in under way ends; nil when none is.
func (s *Session) Running() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return nil
	}
	return s.running.done
}

// Observe sends the steps to notify and the authorization URL to prompt from
// now on: the bridge, made after the Session, records them in order with
// its own events.
func (s *Session) Observe(notify func(Step), prompt io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Notify, s.cfg.Prompt = notify, prompt
}
