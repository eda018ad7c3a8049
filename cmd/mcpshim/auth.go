package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/remote"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

const authUsage = `usage: mcpshim auth login --url URL [--oauth-... flags]
       mcpshim auth status [--json]
       mcpshim auth logout URL

login signs in to a remote MCP server ahead of time, the way mcpshim --url
would on the server's first 401, and keeps the token under the user's config
directory (owner-only). A client waits only so long for a server's handshake
(Claude Code: MCP_TIMEOUT, 30 s): signing in here first means the shim never
needs a browser; it uses and refreshes the kept token. status lists what is
kept, never a token; logout forgets a server's tokens and revokes them where
the authorization server allows.
`

// authSubcommands are auth's words, for mistakes and completion.
var authSubcommands = []string{"login", "status", "logout"}

// runAuth is `mcpshim auth`.
func runAuth(ctx context.Context, c *cli, args []string) int {
	c = c.safeOutput() // error descriptions and URLs come from servers
	if len(args) == 0 {
		fmt.Fprint(c.stderr, authUsage)
		return exitUsage
	}
	switch args[0] {
	case "login":
		return runAuthLogin(ctx, c, args[1:])
	case "status":
		return runAuthStatus(c, args[1:])
	case "logout":
		return runAuthLogout(ctx, c, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, authUsage)
		return 0
	}
	fmt.Fprintf(c.stderr, "mcpshim auth: unknown command %q%s (mcpshim auth --help shows the usage)\n", args[0], cmdline.DidYouMean(args[0], authSubcommands, ""))
	return exitUsage
}

func runAuthLogin(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("auth login", flag.ContinueOnError)
	var raw string
	var of oauthFlags
	fs.StringVar(&raw, "url", "", "the remote server's MCP endpoint")
	of.register(fs)
	if code := parseFlags(c, fs, authUsage, args); code >= 0 {
		return code
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(c.stderr, "mcpshim auth login: --url %q: want the server's http(s) MCP endpoint, e.g. https://mcp.example.com/mcp\n", raw)
		return exitUsage
	}
	cfg, err := of.config(c, u)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth login: %v\n", err)
		return exitUsage
	}
	var s *oauth.Session
	// A server's text may quote a token, a code or the secret it refused.
	hide := func(text string) string {
		for _, v := range s.Secrets() {
			text = strings.ReplaceAll(text, v, redact.Marker)
		}
		return redact.String(text)
	}
	cfg.Notify = func(st oauth.Step) { fmt.Fprintln(c.stderr, "mcpshim auth: "+hide(st.Line())) }
	s, err = oauth.New(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth login: %v\n", err)
		return exitUsage
	}
	status, challenge := remote.Challenge(ctx, u)
	if err := s.Login(ctx, status, challenge); err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth login: %s\n", hide(err.Error()))
		return exitConfig
	}
	fmt.Fprintf(c.stdout, "signed in to %s; mcpshim --url %s%s will use the kept token\n", redact.URL(u), redact.URL(u), of.args())
	return 0
}

func runAuthStatus(c *cli, args []string) int {
	fs := flag.NewFlagSet("auth status", flag.ContinueOnError)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print one JSON document instead of the table")
	if code := parseFlags(c, fs, authUsage, args); code >= 0 {
		return code
	}
	store, err := authStore(c)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth status: %v\n", err)
		return exitConfig
	}
	recs, err := store.List()
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth status: %v\n", err)
		return exitConfig
	}
	entries := oauth.Statuses(store, recs, time.Now())
	if asJSON {
		return c.emitJSON("auth status", map[string]any{"dir": store.Dir, "servers": entries}, 0)
	}
	if len(entries) == 0 {
		fmt.Fprintf(c.stdout, "no sign-ins kept in %s; sign in with mcpshim auth login --url URL\n", store.Dir)
		return 0
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tCLIENT\tISSUER\tSCOPE\tTOKEN")
	for _, e := range entries {
		// Each cell escaped whole: a newline or a tab a server put in a
		// scope would draw a row or a column of its own.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.String(e.Server), termsafe.String(e.Client), termsafe.String(e.Issuer), termsafe.String(orDash(e.Scope)), termsafe.String(e.State))
	}
	tw.Flush()
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runAuthLogout(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("auth logout", flag.ContinueOnError)
	var of oauthFlags
	of.register(fs)
	rest, err := cmdline.Parse(fs, args, "mcpshim auth logout --help")
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		fmt.Fprint(c.stdout, authUsage)
		cmdline.PrintFlags(c.stdout, fs)
		return 0
	case err != nil:
		fmt.Fprintf(c.stderr, "mcpshim auth logout: %v\n", err)
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprint(c.stderr, "mcpshim auth logout: want the server's URL, as mcpshim auth status lists it\n")
		return exitUsage
	}
	store, err := authStore(c)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth logout: %v\n", err)
		return exitConfig
	}
	secret := ""
	if u, err := url.Parse(rest[0]); err == nil && of.ClientSecret != "" {
		if cfg, err := of.config(c, u); err == nil {
			secret = cfg.ClientSecret
		}
	}
	n, err := store.Logout(ctx, rest[0], secret, func(r *oauth.Record, how string) {
		fmt.Fprintf(c.stdout, "signed out of %s (%s): %s\n", r.Server, r.ClientKey, how)
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim auth logout: %v\n", err)
		return exitConfig
	}
	if n == 0 {
		fmt.Fprintf(c.stderr, "mcpshim auth logout: no sign-in kept for %s (mcpshim auth status lists them)\n", rest[0])
		return exitConfig
	}
	return 0
}

func authStore(c *cli) (*oauth.Store, error) {
	dir, err := oauth.DefaultDir(c.getenv)
	if err != nil {
		return nil, err
	}
	return &oauth.Store{Dir: dir, Waiting: func(holder string) { fmt.Fprintf(c.stderr, "mcpshim auth: waiting for %s\n", holder) }}, nil
}
