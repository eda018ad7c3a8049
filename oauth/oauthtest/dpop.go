package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// The nonces the servers demand with Options.DPoPNonce (RFC 9449 §8, §9).
const (
	asNonce = "as-nonce-1"
	rsNonce = "rs-nonce-1"
)

// proof checks a DPoP proof (RFC 9449 §4.3) for method and target and
// returns its key's thumbprint-like identity (the x and y of its JWK), its
// claims, or why it is refused.
func (s *Servers) proof(r *http.Request, target string) (key string, claims map[string]any, why string) {
	parts := strings.Split(r.Header.Get("DPoP"), ".")
	if len(parts) != 3 {
		return "", nil, "no DPoP proof"
	}
	var header struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y string }
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil || header.Typ != "dpop+jwt" || header.Alg != "ES256" || len(sig) != 64 {
		return "", nil, "a malformed DPoP proof"
	}
	x, _ := base64.RawURLEncoding.DecodeString(header.JWK.X)
	y, _ := base64.RawURLEncoding.DecodeString(header.JWK.Y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", nil, "the DPoP proof's signature does not verify"
	}
	iat, _ := claims["iat"].(float64)
	jti, _ := claims["jti"].(string)
	switch {
	case claims["htm"] != r.Method || claims["htu"] != target:
		return "", nil, "the DPoP proof's htm or htu is not this request's"
	case time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute:
		return "", nil, "the DPoP proof's iat is stale"
	case jti == "" || s.jtis[jti]:
		return "", nil, "the DPoP proof's jti is missing or used before"
	}
	s.jtis[jti] = true
	return header.JWK.X + "." + header.JWK.Y, claims, ""
}

// IDPURL is the identity provider's token endpoint (Options.IDPKey).
func (s *Servers) IDPURL() string { return s.AS.URL + "/idp/token" }

// SignJWT signs claims with key as ES256, for the tests' ID and workload
// tokens.
func SignJWT(key *ecdsa.PrivateKey, typ string, claims map[string]any) string {
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": typ})
	c, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(input))
	r, sig, _ := ecdsa.Sign(rand.Reader, key, sum[:])
	return input + "." + b64(append(r.FillBytes(make([]byte, 32)), sig.FillBytes(make([]byte, 32))...))
}

// idpToken is the identity provider's token exchange (RFC 8693, SEP-990):
// an ID token it signed, for this authorization server and resource, becomes
// an ID-JAG.
func (s *Servers) idpToken(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	claims, ok := jwtClaims(f.Get("subject_token"), func(jwtClaimSet) *ecdsa.PublicKey { return &s.opts.IDPKey.PublicKey })
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
	case !ok || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
		oauthError(w, http.StatusBadRequest, "invalid_grant", "not an ID token of this identity provider")
	case f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" || f.Get("audience") != s.Issuer() || f.Get("resource") != s.opts.Resource:
		oauthError(w, http.StatusBadRequest, "invalid_request", "requested_token_type, audience or resource")
	default:
		jag := SignJWT(s.opts.IDPKey, "oauth-id-jag+jwt", map[string]any{"iss": s.AS.URL, "sub": claims.Sub, "aud": s.Issuer(),
			"resource": s.opts.Resource, "exp": time.Now().Add(5 * time.Minute).Unix()})
		writeJSON(w, http.StatusOK, map[string]string{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	}
}
