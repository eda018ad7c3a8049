package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ResourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728 §2), the fields the flow reads.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	// URL is where the document was read.
	URL string `json:"-"`
}

// resourceMetadataURLs are the well-known locations of a server's metadata,
// in the spec's order (2025-11-25, Protected Resource Metadata Discovery):
// "At the path of the server's MCP endpoint: https://example.com/public/mcp
// could host metadata at
// https://example.com/.well-known/oauth-protected-resource/public/mcp; At the
// root: https://example.com/.well-known/oauth-protected-resource". RFC 9728
// §3.1: a terminating slash is removed and the query kept.
func resourceMetadataURLs(server *url.URL) []string {
	origin := server.Scheme + "://" + server.Host
	root := origin + "/.well-known/oauth-protected-resource"
	path := strings.TrimSuffix(server.EscapedPath(), "/")
	if path == "" {
		return []string{root}
	}
	withPath := root + path
	if server.RawQuery != "" {
		withPath += "?" + server.RawQuery
	}
	return []string{withPath, root}
}

// errNoResourceMetadata is a server that publishes no resource metadata at
// all: a 2025-03-26 server, whose authorization server is its own origin.
var errNoResourceMetadata = errors.New("the server publishes no protected resource metadata")

// resourceMetadata finds the server's metadata: the challenge's
// resource_metadata when present, "otherwise they MUST fall back to
// constructing and requesting the well-known URIs in the order listed above".
// A document that is found but wrong (another resource, no authorization
// server) stops the search: it is never skipped for the next one.
func (s *Session) resourceMetadata(ctx context.Context, challengeURL string) (*ResourceMetadata, error) {
	var urls []string
	if challengeURL != "" {
		if err := s.checkEndpoint("resource_metadata URL", challengeURL); err != nil {
			return nil, err
		}
		urls = append(urls, challengeURL)
	}
	urls = append(urls, resourceMetadataURLs(s.cfg.Server)...)
	m, u, tried, err := firstDocument[ResourceMetadata](ctx, s, urls)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w (tried %s)", errNoResourceMetadata, strings.Join(tried, ", "))
	}
	m.URL = u
	if err := checkResource(s.cfg.Server, m.Resource); err != nil {
		return nil, fmt.Errorf("the protected resource metadata at %s: %w", u, err)
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("the protected resource metadata at %s names no authorization_servers", u)
	}
	return m, nil
}

// checkResource refuses metadata published for another resource. The
// resource must be the server's URL or a prefix of it on a path segment
// boundary, on the same origin, without a fragment: RFC 9728 §3.3 ("The
// resource value returned MUST be identical to the protected resource's
// resource identifier value into which the well-known URI path suffix was
// inserted") and §7.3, and RFC 8707 §2 (no fragment).
func checkResource(server *url.URL, resource string) error {
	r, err := url.Parse(resource)
	if err != nil || r.Scheme == "" || r.Host == "" {
		return fmt.Errorf("its resource %q is not an absolute URL", resource)
	}
	if r.Fragment != "" || strings.Contains(resource, "#") {
		return fmt.Errorf("its resource %q has a fragment", resource)
	}
	if !sameOrigin(server, r) {
		return fmt.Errorf("its resource %s is not this server (%s): refusing to sign in for another resource", resource, origin(server))
	}
	want := strings.TrimSuffix(r.EscapedPath(), "/")
	have := strings.TrimSuffix(server.EscapedPath(), "/")
	if want != "" && have != want && !strings.HasPrefix(have, want+"/") {
		return fmt.Errorf("its resource %s does not cover this server's path %s: refusing to sign in for another resource", resource, server.EscapedPath())
	}
	return nil
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// sameOrigin compares scheme, host and port, the default port and the case of
// scheme and host aside.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// canonicalResource is the resource indicator when the server publishes no
// metadata: its URL without fragment, scheme and host lower-cased (2025-11-25,
// Canonical Server URI), and without userinfo and query: a password or an
// ?api_key= in --url would go to the authorization server, the browser's
// argv and every log that shows the authorization URL.
func canonicalResource(server *url.URL) string {
	u := *server
	u.Fragment, u.RawFragment = "", ""
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	return u.String()
}
