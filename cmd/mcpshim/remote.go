package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/remote"
)

// remoteFlags are the flags of `mcpshim --url URL`: a remote server over
// Streamable HTTP instead of a command.
type remoteFlags struct {
	url            string
	headers        headerList
	requestTimeout time.Duration
	maxMessage     int64
	giveUpAfter    time.Duration
	transport      string
	entry          string // wrap --remote's copy of the entry it replaced; unused here
	oauth          oauthFlags
}

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "bridge to a remote server over Streamable HTTP at this URL, instead of running -- COMMAND")
	fs.Var(&f.headers, "header", "with --url: an HTTP header 'Name: value' sent on every request (repeatable); ${VAR} and ${VAR:-default} are read from the environment, values never logged")
	fs.StringVar(&f.entry, strings.TrimPrefix(clientconfig.RemoteEntryFlag, "--"), "", "with --url: the config entry mcpshim wrap --remote replaced, kept for unwrap (ignored)")
	fs.DurationVar(&f.requestTimeout, "request-timeout", 60*time.Second, "with --url: the longest wait for one HTTP request (connection, headers, a whole JSON body, one event of a request's stream)")
	fs.StringVar(&f.transport, "transport", remote.TransportAuto, "with --url: auto (Streamable HTTP, falling back to the 2024-11-05 HTTP+SSE transport when the server refuses the first initialize with 400, 404 or 405), http, or sse")
	fs.DurationVar(&f.giveUpAfter, "give-up-after", 0, "with --url: exit 69 when the server has been unreachable this long (0, the default, never: the shim retries until the client leaves)")
	fs.Int64Var(&f.maxMessage, "max-message", remote.DefaultMaxMessage, "with --url: the largest message from the server in bytes, after decompression, 1048576 to 4294967296; a larger one fails its request")
	f.oauth.register(fs)
}

// headerList collects repeated --header flags.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, ", ") }

func (h *headerList) Set(v string) error {
	*h = append(*h, v)
	return nil
}

// remoteConfig checks the --url flags and builds the bridge's settings; the
// error says what to fix. set names the flags given on the command line.
func remoteConfig(c *cli, f *shimFlags, set map[string]bool) (remote.Config, error) {
	u, err := url.Parse(f.remote.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return remote.Config{}, fmt.Errorf("--url %s: want an http:// or https:// URL of the server's MCP endpoint, e.g. https://mcp.example.com/mcp", redact.RawURL(f.remote.url))
	}
	if f.remote.maxMessage < 1<<20 || f.remote.maxMessage > 4<<30 {
		return remote.Config{}, fmt.Errorf("--max-message %d: want 1048576 to 4294967296 bytes", f.remote.maxMessage)
	}
	if t := f.remote.transport; t != remote.TransportAuto && t != remote.TransportHTTP && t != remote.TransportLegacy {
		return remote.Config{}, fmt.Errorf("--transport %q: want auto, http or sse", t)
	}
	if f.remote.giveUpAfter < 0 {
		return remote.Config{}, fmt.Errorf("--give-up-after %v: want 0 (never) or a positive duration", f.remote.giveUpAfter)
	}
	if f.remote.requestTimeout <= 0 {
		return remote.Config{}, fmt.Errorf("--request-timeout %v: want a positive duration", f.remote.requestTimeout)
	}
	var hs []remote.Header
	for _, raw := range f.remote.headers {
		h, err := remote.ParseHeader(raw, c.lookupEnv)
		if err != nil {
			return remote.Config{}, err
		}
		hs = append(hs, h)
	}
	// Seed 004's policy: 500 ms doubling to 30 s, a page on the third
	// consecutive failure, no giving up unless --give-up-after. --backoff and
	// --backoff-max keep their meaning when given.
	p := remote.DefaultPolicy()
	if set["backoff-max"] {
		p.BackoffMax = f.backoffMax
	}
	if set["backoff"] {
		p.Backoff = f.backoff
	}
	p.GiveUpAfter = f.remote.giveUpAfter
	p.Jitter = rand.Float64
	cfg := remote.Config{Name: f.name, URL: u, Headers: hs, Policy: p, Timeout: f.remote.requestTimeout, Grace: f.killGrace, MaxObserve: f.maxObserve, MaxMessage: f.remote.maxMessage, Transport: f.remote.transport}
	// The bridge signs in on a 401 unless the user brings the credential.
	if !slices.ContainsFunc(hs, func(h remote.Header) bool { return h.Name == "Authorization" }) {
		oc, err := f.remote.oauth.config(c, u)
		if err != nil {
			return remote.Config{}, err
		}
		if cfg.Auth, err = oauth.New(oc); err != nil {
			return remote.Config{}, err
		}
	} else if f.remote.oauth.set() {
		return remote.Config{}, fmt.Errorf("--header Authorization and --oauth-* flags both given: the bridge either sends your credential or signs in")
	}
	return cfg, nil
}
