package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"
)

// AuthPrivateKeyJWT is client authentication with a signed assertion
// (RFC 7523 §2.2, OpenID Connect Core §9): the client credentials
// extension's private_key_jwt.
const AuthPrivateKeyJWT = "private_key_jwt"

// ReadClientKey reads a PKCS #8 PEM private key (EC P-256, RSA or Ed25519):
// --oauth-client-key.
func ReadClientKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--oauth-client-key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("--oauth-client-key %s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("--oauth-client-key %s: want a PKCS #8 private key (BEGIN PRIVATE KEY): %w", path, err)
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve.Params().BitSize != 256 {
			return nil, fmt.Errorf("--oauth-client-key %s: an EC key must be P-256 (ES256)", path)
		}
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("--oauth-client-key %s: an unsupported key type", path)
}

// assertion is the signed JWT a private_key_jwt client presents: "iss" and
// "sub" its client_id, "aud" the authorization server's issuer (RFC 7523
// §3 as updated by RFC 7523bis: the issuer identifier), short-lived, with a
// fresh "jti".
func assertion(key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	return signJWT(key, map[string]any{"typ": "JWT"}, map[string]any{"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": newJTI()})
}

func newJTI() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signJWT signs a JWS in the compact serialization with the key's
// algorithm (ES256, RS256, EdDSA), set in the header.
func signJWT(key crypto.Signer, header, claims map[string]any) (string, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		header["alg"] = "ES256"
	case *rsa.PrivateKey:
		header["alg"] = "RS256"
	case ed25519.PrivateKey:
		header["alg"] = "EdDSA"
	default:
		return "", fmt.Errorf("an unsupported key type %T", k)
	}
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		// JWS (RFC 7518 §3.4): R and S, each 32 bytes, not ASN.1.
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, k, sum[:]); err == nil {
			sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
		}
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	}
	if err != nil {
		return "", errors.New("signing a JWT: " + err.Error())
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
