package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// maxDocument bounds a metadata document or a token response: real ones are
// a few KiB.
const maxDocument = 1 << 20

// errNotFound is a metadata location that has no document (any 4xx): the
// next location in the spec's order is tried.
var errNotFound = errors.New("no document there")

// firstDocument reads the first of urls that exists (any 4xx moves on to
// the next, in the spec's order) into a new T, and says where it was found;
// when none exists, the URLs tried. A document found is returned whatever it
// says: its checks stop the search, never skip to the next URL.
func firstDocument[T any](ctx context.Context, s *Session, urls []string) (doc *T, at string, tried []string, err error) {
	for _, u := range urls {
		var m T
		err := s.getJSON(ctx, u, &m)
		if errors.Is(err, errNotFound) {
			tried = append(tried, u)
			continue
		}
		if err != nil {
			return nil, "", nil, err
		}
		return &m, u, nil, nil
	}
	return nil, "", tried, nil
}

// getJSON fetches a metadata document into v. A 4xx is errNotFound; a 5xx,
// a transport error or a body that is not a JSON object is an error that
// names the URL.
func (s *Session) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	// 2025-03-26: "MCP clients SHOULD include the header MCP-Protocol-Version:
	// <protocol-version> during Server Metadata Discovery".
	if s.cfg.ProtocolVersion != "" {
		req.Header.Set("MCP-Protocol-Version", s.cfg.ProtocolVersion)
	}
	resp, err := s.http().Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: reading the body: %w", u, err)
	}
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return fmt.Errorf("GET %s: HTTP %d: %w", u, resp.StatusCode, errNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: HTTP %d%s", u, resp.StatusCode, redirectError(resp))
	case len(body) > maxDocument:
		return fmt.Errorf("GET %s: the document is over %d bytes", u, maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not a JSON metadata document: %w", u, err)
	}
	return nil
}

// unwrapURLError drops *url.Error's "Get URL:" prefix: callers name the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redirectRule is the bridge's redirect rule for the sign-in's requests
// (metadata, registration, token, revocation): a redirect is followed only within
// the origin (scheme, host and port) it was sent to, a POST's only when it
// is a 307 or 308 (method and body kept), at most 5; any other is answered
// as the redirect itself, which names it. A revocation carries the tokens
// and the client's secret; a metadata answer decides where they go.
func redirectRule(post bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		code := 0
		if req.Response != nil {
			code = req.Response.StatusCode
		}
		if len(via) > 5 || !sameOrigin(req.URL, first) ||
			(post && code != http.StatusTemporaryRedirect && code != http.StatusPermanentRedirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// redirectError names a redirect that was not followed.
func redirectError(resp *http.Response) string {
	if resp.StatusCode/100 != 3 {
		return ""
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return " (a redirect, not followed)"
	}
	loc = resp.Request.URL.ResolveReference(loc)
	loc.User, loc.RawQuery, loc.Fragment = nil, "", ""
	return " (a redirect to " + loc.String() + ", not followed: only 307 and 308 within the same origin are)"
}

// isJSON tells whether a Content-Type is JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// loopback tells whether host (no port) is this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint refuses an endpoint that is not an absolute http(s) URL, and
// plain http unless the server is on this machine or the MCP server itself
// was given as http: "All authorization server endpoints MUST be served over
// HTTPS" (2025-11-25, Communication Security).
func (s *Session) checkEndpoint(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("the %s %q is not an http(s) URL", what, raw)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) && s.cfg.Server.Scheme != "http" {
		return fmt.Errorf("the %s %s is plain http: authorization endpoints must be https", what, raw)
	}
	return nil
}
