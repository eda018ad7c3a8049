package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Token is what a token endpoint granted (RFC 6749 §5.1).
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Obtained     time.Time `json:"obtained,omitzero"`
	// Scope is the granted scope when the server said, else the requested one.
	Scope string `json:"scope,omitempty"`
	// DPoPKey is the key a DPoP-bound token is bound to (PKCS #8 DER).
	DPoPKey []byte `json:"dpop_key,omitempty"`
}

// expired tells whether the token should be refreshed before use: within 30
// seconds of its expiry, or a quarter of its life for a short-lived one. A
// token with no expiry never expires here; the server's 401 says when it does.
func (t *Token) expired(now time.Time) bool {
	if t.Expiry.IsZero() {
		return false
	}
	skew := 30 * time.Second
	if life := t.Expiry.Sub(t.Obtained); !t.Obtained.IsZero() && life/4 < skew {
		skew = life / 4
	}
	return now.Add(skew).After(t.Expiry)
}

// TokenError is a token or registration endpoint's error answer (RFC 6749
// §5.2, RFC 7591 §3.2.2).
type TokenError struct {
	Endpoint    string
	Status      int
	Code        string // "invalid_grant", "invalid_client", ...
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("%s answered HTTP %d", e.Endpoint, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// The token endpoint authentication methods (RFC 7591 §2).
const (
	AuthBasic = "client_secret_basic"
	AuthPost  = "client_secret_post"
	AuthNone  = "none"
)

// authMethod is how the client authenticates at the token endpoint: what its
// registration says, else "the token endpoint auth method the server
// advertises". RFC 8414 §2: when the list is omitted "the default is
// client_secret_basic".
func authMethod(c *Client, m *ServerMetadata) string {
	if c.AuthMethod != "" {
		return c.AuthMethod
	}
	if c.key != nil {
		return AuthPrivateKeyJWT
	}
	if c.Secret == "" {
		return AuthNone
	}
	supported := m.TokenEndpointAuthMethodsSupported
	if len(supported) == 0 || slices.Contains(supported, AuthBasic) {
		return AuthBasic
	}
	if slices.Contains(supported, AuthPost) {
		return AuthPost
	}
	return AuthBasic
}

// tokenRequest posts a grant to the token endpoint with the client's
// authentication and the resource indicator, and reads the token. RFC 8707
// §2: the resource goes in "both authorization requests and token requests";
// the MCP spec: "MUST be included in both".
//
// golang.org/x/oauth2 is not used here: its refresh cannot carry the
// resource parameter.
func (s *Session) tokenRequest(ctx context.Context, tg *target, c *Client, form url.Values) (*Token, error) {
	m := tg.as
	if tg.resource != "" {
		form.Set("resource", tg.resource)
	}
	var resp *http.Response
	var raw []byte
	var fields map[string]string
	var err error
	// A DPoP server may ask for its nonce once: "use_dpop_nonce" with the
	// DPoP-Nonce header (RFC 9449 §8), and the request is made again.
	for try := 0; try < 2; try++ {
		sent := cloneForm(form)
		req, err := s.formRequest(ctx, m.TokenEndpoint, c, m, sent)
		if err != nil {
			return nil, fmt.Errorf("token endpoint %s: %w", m.TokenEndpoint, err)
		}
		s.hide(c.Secret)
		for _, k := range secretFields {
			s.hide(sent.Get(k))
		}
		if tg.dpopKey != nil {
			req.Header.Set("DPoP", dpopProof(tg.dpopKey, http.MethodPost, m.TokenEndpoint, s.nonce(&s.asNonce), "", time.Now()))
		}
		if resp, err = s.postClient().Do(req); err != nil {
			return nil, fmt.Errorf("token endpoint %s: %w", m.TokenEndpoint, unwrapURLError(err))
		}
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxDocument))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("token endpoint %s: reading the answer: %w", m.TokenEndpoint, err)
		}
		fields, err = tokenFields(resp.Header.Get("Content-Type"), raw)
		n := resp.Header.Get("DPoP-Nonce")
		if tg.dpopKey == nil || n == "" {
			break
		}
		s.setNonce(&s.asNonce, n)
		if resp.StatusCode != http.StatusBadRequest || fields["error"] != "use_dpop_nonce" {
			break
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &TokenError{Endpoint: m.TokenEndpoint, Status: resp.StatusCode, Code: fields["error"], Description: fields["error_description"]}
	}
	if err != nil {
		return nil, fmt.Errorf("token endpoint %s: %w", m.TokenEndpoint, err)
	}
	t := &Token{AccessToken: fields["access_token"], TokenType: fields["token_type"], RefreshToken: fields["refresh_token"], Scope: fields["scope"]}
	s.hide(t.AccessToken, t.RefreshToken)
	if t.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint %s: the answer has no access_token", m.TokenEndpoint)
	}
	switch {
	case form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange":
		// An ID-JAG is no access token: its type is "N_A" (RFC 8693 §2.2.1).
	case tg.dpopKey != nil && strings.EqualFold(t.TokenType, "DPoP"):
		t.TokenType, t.DPoPKey = "DPoP", tg.dpopKey
	case t.TokenType != "" && !strings.EqualFold(t.TokenType, "Bearer"):
		return nil, fmt.Errorf("token endpoint %s: token_type %q: only Bearer and DPoP tokens are supported", m.TokenEndpoint, t.TokenType)
	}
	t.Obtained = s.now()
	if secs, err := strconv.ParseFloat(fields["expires_in"], 64); err == nil && secs > 0 {
		t.Expiry = t.Obtained.Add(time.Duration(secs * float64(time.Second)))
	}
	if t.Scope == "" {
		t.Scope = form.Get("scope")
	}
	return t, nil
}

// formRequest is a POST of form to an endpoint of the authorization server,
// with the client's authentication by its method.
func (s *Session) formRequest(ctx context.Context, endpoint string, c *Client, m *ServerMetadata, form url.Values) (*http.Request, error) {
	switch authMethod(c, m) {
	case AuthBasic:
		req, err := newForm(ctx, endpoint, form)
		if err == nil {
			// RFC 6749 §2.3.1: the id and secret are form-encoded, then joined.
			cred := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID) + ":" + url.QueryEscape(c.Secret)))
			s.hide(cred)
			req.Header.Set("Authorization", "Basic "+cred)
		}
		return req, err
	case AuthPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case AuthPrivateKeyJWT:
		jwt, err := assertion(c.key, c.ID, m.Issuer, time.Now())
		if err != nil {
			return nil, err
		}
		form.Set("client_id", c.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	default:
		form.Set("client_id", c.ID)
	}
	return newForm(ctx, endpoint, form)
}

func cloneForm(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func newForm(ctx context.Context, endpoint string, form url.Values) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// tokenFields reads a token answer: JSON, or the form encoding some servers
// (GitHub's, without Accept) still send. Values are strings; numbers keep
// their text.
func tokenFields(contentType string, raw []byte) (map[string]string, error) {
	out := map[string]string{}
	if !isJSON(contentType) && strings.HasPrefix(strings.TrimSpace(contentType), "application/x-www-form-urlencoded") {
		vals, err := url.ParseQuery(string(raw))
		if err != nil {
			return out, fmt.Errorf("a form answer that does not parse: %w", err)
		}
		for k := range vals {
			out[k] = vals.Get(k)
		}
		return out, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return out, fmt.Errorf("the answer is not a JSON object (Content-Type %q)", contentType)
	}
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out, nil
}
