package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"net/url"
	"slices"
	"time"
)

// DPoP (RFC 9449): a token bound to a key the client holds, each request
// carrying a fresh proof signed with it. Used when the authorization server
// lists ES256 in dpop_signing_alg_values_supported (the MCP DPoP extension,
// SEP-1932).

// dpopUsable tells whether the server takes ES256 DPoP proofs.
func dpopUsable(m *ServerMetadata) bool {
	return slices.Contains(m.DPoPSigningAlgValuesSupported, "ES256")
}

// newDPoPKey is a fresh P-256 key, one per sign-in, kept with its token
// (the token is bound to it), as PKCS #8 DER.
func newDPoPKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return x509.MarshalPKCS8PrivateKey(k)
}

func parseDPoPKey(der []byte) (*ecdsa.PrivateKey, bool) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	ec, ok := k.(*ecdsa.PrivateKey)
	return ec, err == nil && ok
}

// dpopProof is a DPoP proof JWT (RFC 9449 §4.2): the public key in the
// header; a fresh jti, the method, the URL without query and fragment, the
// time; the server's nonce when it gave one; for a resource request the
// access token's hash.
func dpopProof(der []byte, method, target, nonce, accessToken string, now time.Time) string {
	k, ok := parseDPoPKey(der)
	if !ok {
		return ""
	}
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	b64 := base64.RawURLEncoding.EncodeToString
	jwk := map[string]string{"kty": "EC", "crv": "P-256",
		"x": b64(k.PublicKey.X.FillBytes(make([]byte, 32))), "y": b64(k.PublicKey.Y.FillBytes(make([]byte, 32)))}
	claims := map[string]any{"jti": newJTI(), "htm": method, "htu": u.String(), "iat": now.Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64(sum[:])
	}
	jwt, err := signJWT(k, map[string]any{"typ": "dpop+jwt", "jwk": jwk}, claims)
	if err != nil {
		return ""
	}
	return jwt
}
