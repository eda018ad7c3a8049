// Package oauthtest is a strict authorization server and protected resource
// on loopback for tests: exact issuer, iss in every redirect, PKCE S256
// verified, the resource indicator checked on every request, codes used
// once, refresh tokens rotated (a reused one revokes the family), RFC 7009
// revocation, dynamic registration with exact redirect URIs. What a
// conformance suite's server checks, it checks, and it answers a violation
// with the OAuth error a real server gives.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options shape the servers.
type Options struct {
	// Resource is the protected resource's identifier, published in its
	// metadata; default the resource server's URL plus "/mcp".
	Resource string
	// ResourcePath is where the MCP endpoint is served; default "/mcp".
	ResourcePath string
	// Scopes the resource requires; the challenge names them when
	// ScopeInChallenge.
	Scopes           []string
	ScopeInChallenge bool
	// ScopesSupported are published in the resource metadata; nil: none.
	ScopesSupported []string
	// ASScopes are the authorization server's scopes_supported.
	ASScopes []string
	// TokenLife is an access token's expires_in; default one hour.
	TokenLife time.Duration
	// NoRefresh: no refresh tokens are issued.
	NoRefresh bool
	// AuthMethods the token endpoint accepts; default none and
	// client_secret_basic.
	AuthMethods []string
	// PreRegistered clients: id to secret ("" for a public client).
	PreRegistered map[string]string
	// KeyClients are pre-registered private_key_jwt clients: id to the
	// public half of their ES256 key.
	KeyClients map[string]*ecdsa.PublicKey
	// WorkloadKey verifies the workload identity tokens of the JWT-bearer
	// grant (ES256, aud the issuer).
	WorkloadKey *ecdsa.PublicKey
	// IDPKey makes the authorization server's host an enterprise identity
	// provider too: /idp/token exchanges an ID token it signed (RFC 8693)
	// for an ID-JAG it signs, which the JWT-bearer grant takes.
	IDPKey *ecdsa.PrivateKey
	// NoRegistration hides the registration endpoint.
	NoRegistration bool
	// NoRevocation hides the revocation endpoint: a logout only forgets.
	NoRevocation bool
	// IssuerPath is the issuer's path (e.g. "/tenant1"); default none.
	IssuerPath string
	// Handler answers authorized requests to the MCP endpoint; default an
	// echo of the body.
	Handler http.Handler
	// DPoP binds tokens to the client's key (RFC 9449): proofs are required
	// at the token endpoint and on every request; DPoPNonce makes both
	// servers demand their nonce first.
	DPoP, DPoPNonce bool
	// TokenSuffix is appended to every access token issued, as a hostile
	// server's control character.
	TokenSuffix string
	// RefuseTokens makes the resource refuse every token (401
	// invalid_token), as a server whose audience check is broken does.
	RefuseTokens bool
	// RotateScopes makes the resource answer every live token with a 403
	// insufficient_scope for a scope it never asked for before.
	RotateScopes bool
	// RefuseCodes makes the token endpoint refuse every authorization code
	// (invalid_grant): each sign-in in the browser fails.
	RefuseCodes bool
}

// Servers are the authorization server and the protected resource.
type Servers struct {
	AS, RS *httptest.Server
	opts   Options

	mu        sync.Mutex
	clients   map[string]*client
	codes     map[string]*grant
	access    map[string]*grant
	refresh   map[string]*grant
	families  map[int]bool // revoked refresh families
	family    int
	log       []string
	authzs    []url.Values // every authorization request
	tokens    []url.Values // every token request (secrets and codes as sent)
	registers []map[string]any
	redirects map[string]string // path to a 307's Location (Redirect)
	denied    []string
	jtis      map[string]bool // DPoP proofs seen
	rotated   int             // RotateScopes' last scope
}

type client struct {
	id, secret, method string
	redirects          []string
	key                *ecdsa.PublicKey
}

type grant struct {
	clientID, redirect, challenge, resource, scope string
	dpopKey                                        string
	family                                         int
	expiry                                         time.Time
	used                                           bool
}

// Start runs both servers until the test ends.
func Start(t testing.TB, o Options) *Servers {
	s := &Servers{opts: o, clients: map[string]*client{}, codes: map[string]*grant{}, access: map[string]*grant{},
		refresh: map[string]*grant{}, families: map[int]bool{}, jtis: map[string]bool{}}
	if s.opts.ResourcePath == "" {
		s.opts.ResourcePath = "/mcp"
	}
	if s.opts.TokenLife == 0 {
		s.opts.TokenLife = time.Hour
	}
	if s.opts.AuthMethods == nil {
		s.opts.AuthMethods = []string{"none", "client_secret_basic"}
	}
	for id, secret := range o.PreRegistered {
		m := "none"
		if secret != "" {
			m = "client_secret_basic"
		}
		s.clients[id] = &client{id: id, secret: secret, method: m}
	}
	for id, key := range o.KeyClients {
		s.clients[id] = &client{id: id, method: "private_key_jwt", key: key}
	}
	// Everything the handlers read is set before they start serving.
	s.AS = httptest.NewUnstartedServer(http.HandlerFunc(s.serveAS))
	s.RS = httptest.NewUnstartedServer(http.HandlerFunc(s.serveRS))
	if s.opts.Resource == "" {
		s.opts.Resource = "http://" + s.RS.Listener.Addr().String() + s.opts.ResourcePath
	}
	s.AS.Start()
	s.RS.Start()
	t.Cleanup(s.AS.Close)
	t.Cleanup(s.RS.Close)
	return s
}

// Issuer is the authorization server's issuer identifier.
func (s *Servers) Issuer() string { return s.AS.URL + s.opts.IssuerPath }

// MCPURL is the MCP endpoint.
func (s *Servers) MCPURL() string { return s.RS.URL + s.opts.ResourcePath }

// Log is what the servers refused or accepted, in order, for failure messages.
func (s *Servers) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

func (s *Servers) logf(format string, a ...any) {
	s.log = append(s.log, fmt.Sprintf(format, a...))
}

// RevokeRefresh revokes every refresh token issued so far, as a person
// signing the app out at the server would.
func (s *Servers) RevokeRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i <= s.family; i++ {
		s.families[i] = true
	}
}

// Grants counts the token requests by grant type.
func (s *Servers) Grants(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.tokens {
		if v.Get("grant_type") == grantType {
			n++
		}
	}
	return n
}

func random() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// Redirect makes both servers answer requests for path with a 307 to
// location from now on, as a hostile or moved server does.
func (s *Servers) Redirect(path, location string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.redirects == nil {
		s.redirects = map[string]string{}
	}
	s.redirects[path] = location
}

// redirected answers r with its 307 when Redirect set one for its path.
func (s *Servers) redirected(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	loc, ok := s.redirects[r.URL.Path]
	s.mu.Unlock()
	if ok {
		http.Redirect(w, r, loc, http.StatusTemporaryRedirect)
	}
	return ok
}

// SetScopes changes the scopes the resource requires from now on.
func (s *Servers) SetScopes(scopes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Scopes = scopes
}

// DenyScope makes the authorization server leave scope out of every grant, as
// for an account that lacks it.
func (s *Servers) DenyScope(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied = append(s.denied, scope)
}

// Issued are the access and refresh tokens issued so far.
func (s *Servers) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.access {
		out = append(out, t)
	}
	for t := range s.refresh {
		out = append(out, t)
	}
	return out
}

// Authorize is every authorization request so far.
func (s *Servers) Authorize() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.authzs...)
}

// Tokens is every token request so far, secrets and codes as sent.
func (s *Servers) Tokens() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.tokens...)
}

// Registers is every registration request so far.
func (s *Servers) Registers() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.registers...)
}
