package main

import (
	"flag"
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/remote"
)

// remoteFlags are the flags of `mcpshim --url URL`: a remote server over
// Streamable HTTP instead of a command.
type remoteFlags struct {
	remote.Flags
	entry string // wrap --remote's copy of the entry it replaced; unused here
	oauth oauthFlags
}

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.URL, "url", "", "bridge to a remote server over Streamable HTTP at this URL, instead of running -- COMMAND")
	fs.Var((*headerList)(&f.Headers), "header", "with --url: an HTTP header 'Name: value' sent on every request (repeatable); ${VAR} and ${VAR:-default} are read from the environment, values never logged")
	fs.StringVar(&f.entry, strings.TrimPrefix(clientconfig.RemoteEntryFlag, "--"), "", "with --url: the config entry mcpshim wrap --remote replaced, kept for unwrap (ignored)")
	fs.DurationVar(&f.RequestTimeout, "request-timeout", 60*time.Second, "with --url: the longest wait for one HTTP request (connection, headers, a whole JSON body, one event of a request's stream)")
	fs.StringVar(&f.Transport, "transport", remote.TransportAuto, "with --url: auto (Streamable HTTP, falling back to the 2024-11-05 HTTP+SSE transport when the server refuses the first initialize with 400, 404 or 405), http, or sse")
	fs.DurationVar(&f.GiveUpAfter, "give-up-after", 0, "with --url: exit 69 when the server has been unreachable this long (0, the default, never: the shim retries until the client leaves)")
	fs.Int64Var(&f.MaxMessage, "max-message", remote.DefaultMaxMessage, "with --url: the largest message from the server in bytes, after decompression, 1048576 to 4294967296; a larger one fails its request")
	f.oauth.register(fs)
}

// headerList collects repeated --header flags.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, ", ") }

func (h *headerList) Set(v string) error {
	*h = append(*h, v)
	return nil
}

// remoteConfig builds the bridge's settings from the --url flags and the
// shim's own that a bridge heeds (remote.Flags.Config checks them); set names
// the flags given on the command line.
func remoteConfig(c *cli, f *shimFlags, set map[string]bool) (remote.Config, error) {
	rf := f.remote.Flags
	// --backoff and --backoff-max keep their meaning when given.
	if set["backoff"] {
		rf.Backoff = &f.backoff
	}
	if set["backoff-max"] {
		rf.BackoffMax = &f.backoffMax
	}
	signIn := func(u *url.URL) (oauth.Config, error) { return f.remote.oauth.config(c, u) }
	cfg, err := rf.Config(f.name, c.lookupEnv, signIn, f.remote.oauth.set())
	cfg.Grace, cfg.MaxObserve = f.killGrace, f.maxObserve
	return cfg, err
}
