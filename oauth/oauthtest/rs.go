package oauthtest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func (s *Servers) serveRS(w http.ResponseWriter, r *http.Request) {
	if s.redirected(w, r) {
		return
	}
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
	live = live && !s.opts.RefuseTokens
	if live && s.opts.RotateScopes {
		s.rotated++
		required = []string{fmt.Sprintf("rotated-%d", s.rotated)}
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
