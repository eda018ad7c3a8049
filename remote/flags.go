package remote

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// Flags are the flags of mcpshim --url as given, with the shim's own that a
// bridge heeds.
type Flags struct {
	URL            string
	Headers        []string // 'Name: value', ${VAR} unexpanded
	RequestTimeout time.Duration
	MaxMessage     int64
	GiveUpAfter    time.Duration
	Transport      string
	// Backoff and BackoffMax are --backoff and --backoff-max when given; nil
	// keeps the policy's own.
	Backoff, BackoffMax *time.Duration
}

// Config checks the flags and builds the bridge's settings for the server
// name: headers expanded with lookup, and, unless the headers bring their
// own Authorization, the sign-in signIn builds for the server's URL (oauthSet
// says whether any --oauth-* flag was given). The error says what to fix.
func (f *Flags) Config(name string, lookup func(string) (string, bool), signIn func(*url.URL) (oauth.Config, error), oauthSet bool) (Config, error) {
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("--url %s: want an http:// or https:// URL of the server's MCP endpoint, e.g. https://mcp.example.com/mcp", redact.RawURL(f.URL))
	}
	if f.MaxMessage < 1<<20 || f.MaxMessage > 4<<30 {
		return Config{}, fmt.Errorf("--max-message %d: want 1048576 to 4294967296 bytes", f.MaxMessage)
	}
	if t := f.Transport; t != TransportAuto && t != TransportHTTP && t != TransportLegacy {
		return Config{}, fmt.Errorf("--transport %q: want auto, http or sse", t)
	}
	if f.GiveUpAfter < 0 {
		return Config{}, fmt.Errorf("--give-up-after %v: want 0 (never) or a positive duration", f.GiveUpAfter)
	}
	if f.RequestTimeout <= 0 {
		return Config{}, fmt.Errorf("--request-timeout %v: want a positive duration", f.RequestTimeout)
	}
	var hs []Header
	for _, raw := range f.Headers {
		h, err := ParseHeader(raw, lookup)
		if err != nil {
			return Config{}, err
		}
		hs = append(hs, h)
	}
	p := DefaultPolicy()
	if f.BackoffMax != nil {
		p.BackoffMax = *f.BackoffMax
	}
	if f.Backoff != nil {
		p.Backoff = *f.Backoff
	}
	p.GiveUpAfter = f.GiveUpAfter
	p.Jitter = rand.Float64
	cfg := Config{Name: name, URL: u, Headers: hs, Policy: p, Timeout: f.RequestTimeout, MaxMessage: f.MaxMessage, Transport: f.Transport}
	// The bridge signs in on a 401 unless the user brings the credential.
	if !slices.ContainsFunc(hs, func(h Header) bool { return h.Name == "Authorization" }) {
		oc, err := signIn(u)
		if err != nil {
			return Config{}, err
		}
		if cfg.Auth, err = oauth.New(oc); err != nil {
			return Config{}, err
		}
	} else if oauthSet {
		return Config{}, fmt.Errorf("--header Authorization and --oauth-* flags both given: the bridge either sends your credential or signs in")
	}
	return cfg, nil
}
