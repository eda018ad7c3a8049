package remote

// Redirects on the MCP endpoint. A 307 to the next port received the
// Authorization header, every --header, the session and the tools/call
// body, and a 302 became a GET that carried them; so only a 307 or 308 to
// the same origin is followed (the same server: /mcp to /mcp/, as a mounted
// app answers), and every other redirect is an error for its request that
// names where it pointed.

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// maxRedirects bounds a chain of same-origin redirects.
const maxRedirects = 5

// checkRedirect is the HTTP client's CheckRedirect. Each hop it follows is
// recorded as an http_exchange with its status and location.
func (b *bridge) checkRedirect(req *http.Request, via []*http.Request) error {
	resp := req.Response
	if resp == nil || len(via) > maxRedirects || !sameOrigin(req.URL, via[0].URL) ||
		(resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect) {
		return http.ErrUseLastResponse // the caller refuses it
	}
	prev := via[len(via)-1]
	b.emit(phases.Transport, phases.HTTPExchange, ledger.F(phases.FieldHTTPMethod, prev.Method), ledger.F("path", prev.URL.Path),
		ledger.F(phases.FieldStatus, resp.StatusCode), ledger.F(phases.FieldLocation, location(resp, false)), ledger.F("redirect", "followed"))
	return nil
}

func sameOrigin(a, b *url.URL) bool { return a.Scheme == b.Scheme && a.Host == b.Host }

// location is a redirect's Location as the bridge shows it: no userinfo,
// query values hidden; absolute resolves it against the request's URL.
func location(resp *http.Response, absolute bool) string {
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return "(a Location that does not parse)"
	}
	if absolute && resp.Request != nil {
		loc = resp.Request.URL.ResolveReference(loc)
	}
	return redact.URL(loc)
}

// refuseRedirect answers the requests of msg with an error naming the
// redirect, which was not followed, and records it. It is no outage: the
// server answered.
func (b *bridge) refuseRedirect(resp *http.Response, msg message) {
	drain(resp)
	loc := location(resp, true)
	b.emit(phases.Transport, phases.RedirectRefused, ledger.F(phases.FieldStatus, resp.StatusCode), ledger.F(phases.FieldLocation, loc),
		ledger.F(phases.FieldMethod, msg.method), ledger.F(phases.FieldRequestID, string(msg.rawID)))
	b.say("the server redirected %s to %s (HTTP %d); not followed", msg.method, loc, resp.StatusCode)
	b.failOpen(msg, fmt.Sprintf("mcpshim: server %s redirected the request to %s (HTTP %d %s); mcpshim follows only a 307 or 308 to the same origin, so that credentials never go elsewhere: if the new address is the server's, put it in --url",
		b.cfg.Name, loc, resp.StatusCode, http.StatusText(resp.StatusCode)))
}
