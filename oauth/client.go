package oauth

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// Client is the client's identity at one authorization server.
type Client struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint auth method the registration named.
	AuthMethod  string `json:"token_endpoint_auth_method,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`
	// Kind says where the identity came from: KindPreRegistered,
	// KindMetadataDocument or KindRegistered.
	Kind string `json:"kind"`
	// Issuer is the authorization server it belongs to (2026-07-28,
	// Authorization Server Binding: credentials are "keyed by the
	// authorization server's issuer identifier").
	Issuer string `json:"issuer"`
	// key signs a private_key_jwt client's assertions; never stored.
	key crypto.Signer
}

// Where a client identity came from.
const (
	KindPreRegistered    = "pre-registered"
	KindMetadataDocument = "metadata-document"
	KindRegistered       = "registered"
)

// clientName is what the authorization server shows the person.
const clientName = "mcpshim"

// client picks the identity in the spec's order (2025-11-25, Client
// Registration Approaches): "Use pre-registered client information for the
// server if the client has it available"; "Use Client ID Metadata Documents
// if the Authorization Server indicates if the server supports it"; "Use
// Dynamic Client Registration as a fallback if the Authorization Server
// supports it". A registration kept from before is reused only at the
// issuer that made it; redirect is the loopback URI of this sign-in, or ""
// for client credentials.
func (s *Session) client(ctx context.Context, m *ServerMetadata, redirect string, kept *Client) (*Client, error) {
	if s.cfg.ClientID != "" {
		return s.preRegistered(m.Issuer, redirect), nil
	}
	if s.cfg.ClientMetadataURL != "" && m.ClientIDMetadataDocumentSupported {
		return &Client{ID: s.cfg.ClientMetadataURL, Kind: KindMetadataDocument, Issuer: m.Issuer, RedirectURI: redirect}, nil
	}
	if kept != nil && kept.Kind == KindRegistered && kept.Issuer == m.Issuer && (redirect == "" || kept.RedirectURI == redirect) {
		return kept, nil
	}
	if m.RegistrationEndpoint == "" {
		hint := "register a client there and pass --oauth-client-id (and --oauth-client-secret)"
		if s.cfg.ClientMetadataURL != "" {
			hint = "it does not accept client ID metadata documents either; " + hint
		}
		return nil, fmt.Errorf("the authorization server %s offers no dynamic client registration: %s", m.Issuer, hint)
	}
	return s.register(ctx, m, redirect)
}

// preRegistered is the client the flags name, with its secret or key.
func (s *Session) preRegistered(issuer, redirect string) *Client {
	return &Client{ID: s.cfg.ClientID, Secret: s.cfg.ClientSecret, key: s.cfg.ClientKey, Kind: KindPreRegistered, Issuer: issuer, RedirectURI: redirect}
}

// registration is an RFC 7591 §2 registration request.
type registration struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	// 2026-07-28: "MCP clients MUST specify an appropriate application_type
	// during Dynamic Client Registration"; CLI tools "SHOULD use
	// application_type: "native"".
	ApplicationType string `json:"application_type"`
	Scope           string `json:"scope,omitempty"`
}

// register performs dynamic client registration (RFC 7591 §3). A public
// client (auth method none) is asked for when the server accepts one, as a
// native application should be; else what the server advertises.
func (s *Session) register(ctx context.Context, m *ServerMetadata, redirect string) (*Client, error) {
	method := AuthNone
	if sup := m.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, AuthNone) {
		method = sup[0]
	}
	reg := registration{ClientName: clientName, TokenEndpointAuthMethod: method, ApplicationType: "native"}
	if redirect != "" {
		reg.RedirectURIs = []string{redirect}
		reg.GrantTypes = []string{"authorization_code", "refresh_token"}
		reg.ResponseTypes = []string{"code"}
	} else {
		reg.GrantTypes = []string{"client_credentials"}
	}
	body, _ := json.Marshal(reg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("registration endpoint %s: %w", m.RegistrationEndpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.postClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("registration endpoint %s: %w", m.RegistrationEndpoint, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, fmt.Errorf("registration endpoint %s: reading the answer: %w", m.RegistrationEndpoint, err)
	}
	fields, _ := tokenFields("application/json", raw)
	s.hide(fields["client_secret"], fields["registration_access_token"])
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, &TokenError{Endpoint: m.RegistrationEndpoint, Status: resp.StatusCode, Code: fields["error"], Description: fields["error_description"]}
	}
	if fields["client_id"] == "" {
		return nil, fmt.Errorf("registration endpoint %s: the answer has no client_id", m.RegistrationEndpoint)
	}
	c := &Client{ID: fields["client_id"], Secret: fields["client_secret"], AuthMethod: fields["token_endpoint_auth_method"],
		Kind: KindRegistered, Issuer: m.Issuer, RedirectURI: redirect}
	if c.AuthMethod == "" && c.Secret == "" {
		c.AuthMethod = AuthNone
	}
	return c, nil
}

// metadataDocumentRedirect reads the client's own metadata document for a
// loopback redirect URI with a port: the authorization server checks the
// redirect against the document exactly, so the listener must take that
// port. 0 when the document cannot be read or names none.
func (s *Session) metadataDocumentRedirect(ctx context.Context) (string, int) {
	if s.cfg.ClientMetadataURL == "" {
		return "", 0
	}
	var doc struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if s.getJSON(ctx, s.cfg.ClientMetadataURL, &doc) != nil {
		return "", 0
	}
	for _, r := range doc.RedirectURIs {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) {
			continue
		}
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 {
			return r, p
		}
	}
	return "", 0
}
