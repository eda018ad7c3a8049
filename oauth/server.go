package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ServerMetadata is an authorization server's metadata (RFC 8414 §2, OpenID
// Connect Discovery §3), the fields the flow reads.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	// RFC 9207 §2.3.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// RFC 9449 §5.1.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// URL is where the document was read; empty for the 2025-03-26 default
	// endpoints, used when the server publishes no metadata at all.
	URL string `json:"-"`
}

// serverMetadataURLs are the locations of an issuer's metadata in the spec's
// order (2025-11-25 and 2026-07-28, Authorization Server Metadata
// Discovery). With a path: "OAuth 2.0 Authorization Server Metadata with path
// insertion", "OpenID Connect Discovery 1.0 with path insertion", "OpenID
// Connect Discovery 1.0 path appending"; without: the first two at the root.
// RFC 8414 §3.1: "any terminating "/" MUST be removed before inserting".
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

// errNoServerMetadata is an issuer with no metadata document at any location.
var errNoServerMetadata = errors.New("no authorization server metadata")

// serverMetadata reads and checks an issuer's metadata. 2026-07-28: "the
// issuer value in the document MUST be identical to the issuer identifier
// used to construct the well-known URL. If they differ, the client MUST NOT
// use the metadata."
func (s *Session) serverMetadata(ctx context.Context, issuer string) (*ServerMetadata, error) {
	if err := s.checkEndpoint("authorization server", issuer); err != nil {
		return nil, err
	}
	iu, _ := url.Parse(issuer)
	m, u, tried, err := firstDocument[ServerMetadata](ctx, s, serverMetadataURLs(iu))
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w for %s (tried %s)", errNoServerMetadata, issuer, strings.Join(tried, ", "))
	}
	m.URL = u
	if m.Issuer != issuer {
		return nil, fmt.Errorf("the authorization server metadata at %s says issuer %q, not %q: refusing it (RFC 8414 §3.3)", u, m.Issuer, issuer)
	}
	return m, s.checkServerMetadata(m)
}

// checkServerMetadata refuses endpoints that are not http(s) URLs.
func (s *Session) checkServerMetadata(m *ServerMetadata) error {
	if m.TokenEndpoint == "" {
		return fmt.Errorf("the authorization server %s names no token_endpoint", m.Issuer)
	}
	for _, e := range [][2]string{{"token_endpoint", m.TokenEndpoint}, {"authorization_endpoint", m.AuthorizationEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint}, {"revocation_endpoint", m.RevocationEndpoint}} {
		if e[1] != "" {
			if err := s.checkEndpoint(e[0], e[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fallbackMetadata is the 2025-03-26 server with no metadata document: "For
// servers that do not implement OAuth 2.0 Authorization Server Metadata,
// clients MUST use the following default endpoint paths relative to the
// authorization base URL", the server's URL without its path.
func fallbackMetadata(server *url.URL) *ServerMetadata {
	base := origin(server)
	return &ServerMetadata{
		Issuer:                        base,
		AuthorizationEndpoint:         base + "/authorize",
		TokenEndpoint:                 base + "/token",
		RegistrationEndpoint:          base + "/register",
		CodeChallengeMethodsSupported: []string{"S256"},
	}
}

// checkPKCE: "If code_challenge_methods_supported is absent, the
// authorization server does not support PKCE and MCP clients MUST refuse to
// proceed" (2025-11-25, Authorization Code Protection).
func checkPKCE(m *ServerMetadata) error {
	if m.AuthorizationEndpoint == "" {
		return fmt.Errorf("the authorization server %s names no authorization_endpoint: it cannot sign a person in (for a machine client use --oauth-grant client_credentials)", m.Issuer)
	}
	if !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("the authorization server %s does not list S256 in code_challenge_methods_supported: without PKCE the MCP spec forbids the authorization code flow", m.Issuer)
	}
	return nil
}
