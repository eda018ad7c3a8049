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
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
	// IssuerPath is the issuer's path (e.g. "/tenant1"); default none.
	IssuerPath string
	// Handler answers authorized requests to the MCP endpoint; default an
	// echo of the body.
	Handler http.Handler
	// DPoP binds tokens to the client's key (RFC 9449): proofs are required
	// at the token endpoint and on every request; DPoPNonce makes both
	// servers demand their nonce first.
	DPoP, DPoPNonce bool
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
	denied    []string
	jtis      map[string]bool // DPoP proofs seen
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

func (s *Servers) serveAS(w http.ResponseWriter, r *http.Request) {
	p := s.opts.IssuerPath
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server" + p:
		s.metadata(w)
	case p + "/authorize":
		s.authorize(w, r)
	case p + "/token":
		s.token(w, r)
	case p + "/register":
		if s.opts.NoRegistration {
			http.NotFound(w, r)
			return
		}
		s.register(w, r)
	case p + "/revoke":
		s.revoke(w, r)
	case "/idp/token":
		s.idpToken(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Servers) metadata(w http.ResponseWriter) {
	iss := s.Issuer()
	m := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"revocation_endpoint":                            iss + "/revoke",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          s.opts.AuthMethods,
		"authorization_response_iss_parameter_supported": true,
	}
	if !s.opts.NoRegistration {
		m["registration_endpoint"] = iss + "/register"
	}
	if s.opts.ASScopes != nil {
		m["scopes_supported"] = s.opts.ASScopes
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Servers) register(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "not JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registers = append(s.registers, req)
	if req["application_type"] != "native" {
		s.logf("register: application_type %v", req["application_type"])
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "application_type must be native for loopback redirects")
		return
	}
	var redirects []string
	raw, _ := req["redirect_uris"].([]any)
	for _, v := range raw {
		u, _ := v.(string)
		pu, err := url.Parse(u)
		if err != nil || pu.Scheme != "http" || pu.Hostname() != "127.0.0.1" {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "loopback IP literal redirect URIs only")
			return
		}
		redirects = append(redirects, u)
	}
	method, _ := req["token_endpoint_auth_method"].(string)
	if !slices.Contains(s.opts.AuthMethods, method) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method "+method+" is not supported")
		return
	}
	c := &client{id: "dyn-" + random(), method: method, redirects: redirects}
	resp := map[string]any{"client_id": c.id, "redirect_uris": redirects, "token_endpoint_auth_method": method}
	if method != "none" {
		c.secret = "secret-" + random()
		resp["client_secret"] = c.secret
	}
	s.clients[c.id] = c
	s.logf("register: %s %s", c.id, method)
	writeJSON(w, http.StatusCreated, resp)
}

// authorize approves at once, as a person who clicks "Allow" would.
func (s *Servers) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authzs = append(s.authzs, q)
	c := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	// Errors before the redirect URI is trusted are shown, never redirected.
	if c == nil {
		s.logf("authorize: unknown client %q", q.Get("client_id"))
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	if c.redirects != nil && !slices.Contains(c.redirects, redirect) {
		s.logf("authorize: redirect %q not registered", redirect)
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	}
	fail := func(code, desc string) {
		s.logf("authorize: %s: %s", code, desc)
		u, _ := url.Parse(redirect)
		v := url.Values{"error": {code}, "error_description": {desc}, "state": {q.Get("state")}, "iss": {s.Issuer()}}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE S256 is required")
	case q.Get("resource") != s.opts.Resource:
		fail("invalid_target", fmt.Sprintf("resource %q is not %q", q.Get("resource"), s.opts.Resource))
	case q.Get("state") == "":
		fail("invalid_request", "state is required")
	default:
		code := "code-" + random()
		var granted []string
		for _, sc := range strings.Fields(q.Get("scope")) {
			if !slices.Contains(s.denied, sc) {
				granted = append(granted, sc)
			}
		}
		s.codes[code] = &grant{clientID: c.id, redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"),
			scope: strings.Join(granted, " "), expiry: time.Now().Add(time.Minute)}
		u, _ := url.Parse(redirect)
		v := u.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		v.Set("iss", s.Issuer())
		u.RawQuery = v.Encode()
		s.logf("authorize: ok for %s scope %q", c.id, q.Get("scope"))
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
}

// authenticate checks the client's authentication by its method.
func (s *Servers) authenticate(r *http.Request) (*client, string) {
	if r.PostForm.Get("client_assertion_type") != "" {
		return s.assertion(r.PostForm)
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	switch {
	case c == nil:
		return nil, "unknown client " + id
	case c.method == "client_secret_basic" && !basic:
		return nil, "client_secret_basic required"
	case c.method == "client_secret_post" && (basic || secret == ""):
		return nil, "client_secret_post required"
	case c.method == "none" && (basic || secret != ""):
		return nil, "a public client sends no secret"
	case c.secret != secret:
		return nil, "wrong secret"
	}
	return c, ""
}

// assertion checks a private_key_jwt client assertion (RFC 7523 §3): the
// signature, iss and sub the client, aud the issuer, not expired.
func (s *Servers) assertion(f url.Values) (*client, string) {
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return nil, "client_assertion_type"
	}
	claims, ok := jwtClaims(f.Get("client_assertion"), func(c jwtClaimSet) *ecdsa.PublicKey {
		if cl := s.clients[c.Iss]; cl != nil {
			return cl.key
		}
		return nil
	})
	switch {
	case !ok:
		return nil, "the client_assertion is malformed, from an unknown client, or its signature does not verify"
	case claims.Sub != claims.Iss || claims.Aud != s.Issuer() || time.Now().Unix() > claims.Exp:
		return nil, "the client_assertion's sub, aud or exp is wrong"
	}
	return s.clients[claims.Iss], ""
}

type jwtClaimSet struct {
	Iss, Sub, Aud string
	Exp           int64
}

// jwtClaims verifies an ES256 JWT with the key keyFor picks from its
// claims, and returns them.
func jwtClaims(jwt string, keyFor func(jwtClaimSet) *ecdsa.PublicKey) (jwtClaimSet, bool) {
	var claims jwtClaimSet
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return claims, false
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if json.Unmarshal(payload, &claims) != nil || len(sig) != 64 {
		return claims, false
	}
	key := keyFor(claims)
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return claims, key != nil && ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
}

func (s *Servers) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		oauthError(w, http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := r.PostForm
	s.tokens = append(s.tokens, f)
	c, why := s.authenticate(r)
	if c == nil {
		s.logf("token: invalid_client: %s", why)
		oauthError(w, http.StatusUnauthorized, "invalid_client", why)
		return
	}
	if f.Get("resource") != s.opts.Resource {
		s.logf("token: resource %q", f.Get("resource"))
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource must be "+s.opts.Resource)
		return
	}
	// The proof and its nonce come before the grant: a code is not spent on
	// a request that will be made again.
	var dpopKey string
	if s.opts.DPoP {
		key, claims, why := s.proof(r, s.Issuer()+"/token")
		if why != "" {
			s.logf("token: %s", why)
			oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", why)
			return
		}
		if s.opts.DPoPNonce && claims["nonce"] != asNonce {
			w.Header().Set("DPoP-Nonce", asNonce)
			oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "the authorization server requires a nonce")
			return
		}
		dpopKey = key
	}
	var g *grant
	switch f.Get("grant_type") {
	case "authorization_code":
		g = s.codes[f.Get("code")]
		switch {
		case g == nil || g.used || time.Now().After(g.expiry):
			s.logf("token: code unknown or used")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, expired or used code")
			return
		case g.clientID != c.id || g.redirect != f.Get("redirect_uri"):
			s.logf("token: code for another client or redirect")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code issued to another client or redirect_uri")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			s.logf("token: PKCE verifier does not match")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
		g.used = true
		s.family++
		g = &grant{clientID: c.id, resource: g.resource, scope: g.scope, family: s.family}
	case "refresh_token":
		old := s.refresh[f.Get("refresh_token")]
		switch {
		case old == nil || s.families[old.family]:
			s.logf("token: refresh token unknown or revoked")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or revoked refresh token")
			return
		case old.used:
			// A rotated refresh token used again: the family is revoked
			// (OAuth 2.1 §4.3.1), as a stolen token's would be.
			s.families[old.family] = true
			s.logf("token: refresh token reused: family %d revoked", old.family)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "refresh token already used")
			return
		case old.clientID != c.id:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "refresh token of another client")
			return
		}
		old.used = true
		g = &grant{clientID: c.id, resource: old.resource, scope: old.scope, family: old.family, dpopKey: old.dpopKey}
	case "client_credentials":
		s.family++
		g = &grant{clientID: c.id, resource: f.Get("resource"), scope: f.Get("scope"), family: s.family}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, ok := jwtClaims(f.Get("assertion"), func(jwtClaimSet) *ecdsa.PublicKey {
			if s.opts.IDPKey != nil {
				return &s.opts.IDPKey.PublicKey
			}
			return s.opts.WorkloadKey
		})
		if !ok || claims.Aud != s.Issuer() || time.Now().Unix() > claims.Exp {
			s.logf("token: workload assertion refused")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the assertion does not verify, is for another audience or expired")
			return
		}
		s.family++
		g = &grant{clientID: c.id, resource: f.Get("resource"), scope: f.Get("scope"), family: s.family}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	tokenType := "Bearer"
	if s.opts.DPoP {
		if f.Get("grant_type") == "refresh_token" && dpopKey != g.dpopKey {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is bound to another key")
			return
		}
		g.dpopKey, tokenType = dpopKey, "DPoP"
	}
	at := "at-" + random()
	g.expiry = time.Now().Add(s.opts.TokenLife)
	s.access[at] = g
	resp := map[string]any{"access_token": at, "token_type": tokenType, "expires_in": int(s.opts.TokenLife / time.Second)}
	if g.scope != "" {
		resp["scope"] = g.scope
	}
	if !s.opts.NoRefresh && (f.Get("grant_type") == "authorization_code" || f.Get("grant_type") == "refresh_token") {
		rt := "rt-" + random()
		s.refresh[rt] = &grant{clientID: c.id, resource: g.resource, scope: g.scope, family: g.family, dpopKey: g.dpopKey}
		resp["refresh_token"] = rt
	}
	s.logf("token: %s ok for %s", f.Get("grant_type"), c.id)
	writeJSON(w, http.StatusOK, resp)
}

// revoke is RFC 7009: the token and, for a refresh token, its family.
func (s *Servers) revoke(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	tok := r.PostForm.Get("token")
	if g := s.refresh[tok]; g != nil {
		s.families[g.family] = true
	}
	if g := s.access[tok]; g != nil {
		g.expiry = time.Time{}
	}
	s.logf("revoke")
	w.WriteHeader(http.StatusOK)
}

func (s *Servers) serveRS(w http.ResponseWriter, r *http.Request) {
	prm := "/.well-known/oauth-protected-resource" + s.opts.ResourcePath
	switch r.URL.Path {
	case prm:
		m := map[string]any{"resource": s.opts.Resource, "authorization_servers": []string{s.Issuer()}}
		if s.opts.ScopesSupported != nil {
			m["scopes_supported"] = s.opts.ScopesSupported
		}
		writeJSON(w, http.StatusOK, m)
	case s.opts.ResourcePath:
		s.protected(w, r, prm)
	default:
		http.NotFound(w, r)
	}
}

// protected lets through a request with a live token for this resource that
// holds the required scopes: 401 without one, 403 insufficient_scope with
// too few.
func (s *Servers) protected(w http.ResponseWriter, r *http.Request, prm string) {
	s.mu.Lock()
	required := s.opts.Scopes // SetScopes changes it
	s.mu.Unlock()
	challenge := func(status int, extra string) {
		v := fmt.Sprintf(`Bearer resource_metadata="%s%s"`, s.RS.URL, prm)
		if s.opts.ScopeInChallenge && len(required) > 0 {
			v += fmt.Sprintf(`, scope="%s"`, strings.Join(required, " "))
		}
		w.Header().Set("WWW-Authenticate", v+extra)
		http.Error(w, http.StatusText(status), status)
	}
	prefix := "Bearer "
	if s.opts.DPoP {
		prefix = "DPoP "
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), prefix)
	s.mu.Lock()
	g := s.access[tok]
	live := ok && g != nil && time.Now().Before(g.expiry) && !s.families[g.family] && g.resource == s.opts.Resource
	if live && s.opts.DPoP {
		key, claims, why := s.proof(r, s.MCPURL())
		sum := sha256.Sum256([]byte(tok))
		switch {
		case why != "" || key != g.dpopKey || claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]):
			s.logf("resource: DPoP proof refused: %s", why)
			live = false
		case s.opts.DPoPNonce && claims["nonce"] != rsNonce:
			s.mu.Unlock()
			w.Header().Set("DPoP-Nonce", rsNonce)
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			http.Error(w, "use_dpop_nonce", http.StatusUnauthorized)
			return
		}
	}
	var scope string
	if g != nil {
		scope = g.scope
	}
	s.mu.Unlock()
	if !live {
		challenge(http.StatusUnauthorized, `, error="invalid_token"`)
		return
	}
	for _, need := range required {
		if !slices.Contains(strings.Fields(scope), need) {
			challenge(http.StatusForbidden, `, error="insufficient_scope"`)
			return
		}
	}
	h := s.opts.Handler
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		})
	}
	h.ServeHTTP(w, r)
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
