package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/remote"
)

// oauthFlags are the OAuth flags of --url and of mcpshim auth login.
type oauthFlags struct {
	clientID     string
	clientSecret string
	clientKey    string
	assertion    string
	idpToken     string
	idpClientID  string
	metadataURL  string
	grant        string
	redirectURI  string
	timeout      time.Duration
}

func (f *oauthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.clientID, "oauth-client-id", "", "with --url: a client `ID` registered with the server's authorization server (else a client ID metadata document, else dynamic registration)")
	fs.StringVar(&f.clientSecret, "oauth-client-secret", "", "with --url: the pre-registered client's `SECRET`; write ${VAR} and set VAR in the entry's env; never logged")
	fs.StringVar(&f.clientKey, "oauth-client-key", "", "with --url: a PEM `FILE` with the pre-registered client's private key (PKCS #8: EC P-256, RSA or Ed25519): private_key_jwt instead of a secret")
	fs.StringVar(&f.metadataURL, "oauth-client-metadata-url", "", "with --url: the https `URL` of this client's metadata document, used as its client_id where the authorization server accepts one")
	fs.StringVar(&f.grant, "oauth-grant", oauth.GrantAuthorizationCode, "with --url: authorization_code (a person signs in in a browser), client_credentials (a machine client with --oauth-client-id and --oauth-client-secret or --oauth-client-key), jwt-bearer (a workload's identity token, --oauth-assertion-file) or id-jag (an enterprise identity provider's ID token exchanged there, --oauth-idp-token-endpoint)")
	fs.StringVar(&f.assertion, "oauth-assertion-file", "", "with --url and --oauth-grant jwt-bearer or id-jag: the `FILE` holding the workload's identity token (a JWT from Kubernetes, a CI system, a cloud) or the identity provider's ID token, read afresh for each token")
	fs.StringVar(&f.idpToken, "oauth-idp-token-endpoint", "", "with --oauth-grant id-jag: the enterprise identity provider's token endpoint `URL`, where the ID token is exchanged for an ID-JAG")
	fs.StringVar(&f.idpClientID, "oauth-idp-client-id", "", "with --oauth-grant id-jag: this client's `ID` at the identity provider")
	fs.StringVar(&f.redirectURI, "oauth-redirect-uri", "", "with --url: the loopback redirect `URI` a pre-registered client was registered with, e.g. http://127.0.0.1:8765/callback (default: a free port)")
	fs.DurationVar(&f.timeout, "oauth-timeout", 5*time.Minute, "with --url: how long a sign-in may wait for the browser")
}

// config builds the sign-in's settings: the secret's ${VAR} expanded, the
// store under the user's config directory. The error says what to fix.
func (f *oauthFlags) config(c *cli, server *url.URL) (oauth.Config, error) {
	secret := f.clientSecret
	if secret != "" {
		// The secret's ${VAR} are expanded as a --header value's are.
		h, err := remote.ParseHeader("X-Secret: "+secret, c.lookupEnv)
		if err != nil {
			return oauth.Config{}, fmt.Errorf("--oauth-client-secret: %s", strings.TrimPrefix(err.Error(), "--header X-Secret: "))
		}
		secret = h.Value
	}
	if (secret != "" || f.clientKey != "") && f.clientID == "" {
		return oauth.Config{}, fmt.Errorf("--oauth-client-secret or --oauth-client-key without --oauth-client-id: give the client's id too")
	}
	if f.timeout <= 0 || f.timeout > maxDelay {
		return oauth.Config{}, fmt.Errorf("--oauth-timeout %v: want more than 0, at most 24h", f.timeout)
	}
	cfg := oauth.Config{Server: server, ClientID: f.clientID, ClientSecret: secret, ClientMetadataURL: f.metadataURL,
		Grant: f.grant, AssertionFile: f.assertion, IDPTokenEndpoint: f.idpToken, IDPClientID: f.idpClientID,
		RedirectURI: f.redirectURI, BrowserWait: f.timeout, Getenv: c.getenv, Prompt: c.stderr}
	if f.clientKey != "" {
		key, err := oauth.ReadClientKey(f.clientKey)
		if err != nil {
			return oauth.Config{}, err
		}
		cfg.ClientKey = key
	}
	// With no config directory (no HOME) tokens live as long as the process.
	if dir, err := oauth.DefaultDir(c.getenv); err == nil {
		cfg.Store = &oauth.Store{Dir: dir}
	}
	return cfg, nil
}

// checkOAuthArgs checks --oauth-* flags to be baked into entries as the
// shim will, the secret's ${VAR} aside (it is expanded in the entry's
// environment, not wrap's).
func checkOAuthArgs(args []string) error {
	if len(args) == 0 {
		return nil
	}
	var f oauthFlags
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.clientSecret != "" {
		f.clientSecret = "placeholder"
	}
	if f.clientKey != "" {
		if _, err := oauth.ReadClientKey(f.clientKey); err != nil {
			return err
		}
	}
	_, err := oauth.New(oauth.Config{Server: &url.URL{Scheme: "https", Host: "example.com", Path: "/mcp"}, ClientID: f.clientID,
		ClientSecret: f.clientSecret, ClientMetadataURL: f.metadataURL, Grant: f.grant, AssertionFile: f.assertion, IDPTokenEndpoint: f.idpToken, IDPClientID: f.idpClientID, RedirectURI: f.redirectURI})
	if err == nil && (f.clientSecret != "" || f.clientKey != "") && f.clientID == "" {
		err = fmt.Errorf("--oauth-client-secret or --oauth-client-key without --oauth-client-id: give the client's id too")
	}
	return err
}

// set tells whether any OAuth flag was given.
func (f *oauthFlags) set() bool {
	return f.clientID != "" || f.clientSecret != "" || f.clientKey != "" || f.assertion != "" || f.idpToken != "" || f.idpClientID != "" || f.metadataURL != "" || f.grant != oauth.GrantAuthorizationCode || f.redirectURI != ""
}

// args are the flags as given, to print in a command the user can run.
func (f *oauthFlags) args() string {
	var b strings.Builder
	add := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " --%s %s", name, v)
		}
	}
	add("oauth-client-id", f.clientID)
	switch {
	case strings.Contains(f.clientSecret, "${"):
		add("oauth-client-secret", "'"+f.clientSecret+"'")
	case f.clientSecret != "":
		add("oauth-client-secret", "'${SECRET}'") // never the secret itself
	}
	add("oauth-client-key", f.clientKey)
	add("oauth-assertion-file", f.assertion)
	add("oauth-idp-token-endpoint", f.idpToken)
	add("oauth-idp-client-id", f.idpClientID)
	add("oauth-client-metadata-url", f.metadataURL)
	if f.grant != oauth.GrantAuthorizationCode {
		add("oauth-grant", f.grant)
	}
	add("oauth-redirect-uri", f.redirectURI)
	return b.String()
}
