package oauthtest

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

func (s *Servers) serveAS(w http.ResponseWriter, r *http.Request) {
	if s.redirected(w, r) {
		return
	}
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
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          s.opts.AuthMethods,
		"authorization_response_iss_parameter_supported": true,
	}
	if !s.opts.NoRegistration {
		m["registration_endpoint"] = iss + "/register"
	}
	if !s.opts.NoRevocation {
		m["revocation_endpoint"] = iss + "/revoke"
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
		case s.opts.RefuseCodes:
			s.logf("token: code refused (RefuseCodes)")
			oauthError(w, http.StatusBadRequest, "invalid_grant", "this server refuses every code")
			return
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
	at := "at-" + random() + s.opts.TokenSuffix
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
