package main

import (
	"errors"
	"flag"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/remote"
)

// oauthFlags are the OAuth flags of --url and of mcpshim auth login.
type oauthFlags struct{ oauth.Flags }

func (f *oauthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.ClientID, "oauth-client-id", "", "with --url: a client `ID` registered with the server's authorization server (else a client ID metadata document, else dynamic registration)")
	fs.StringVar(&f.ClientSecret, "oauth-client-secret", "", "with --url: the pre-registered client's `SECRET`; write ${VAR} and set VAR in the entry's env; never logged")
	fs.StringVar(&f.ClientKey, "oauth-client-key", "", "with --url: a PEM `FILE` with the pre-registered client's private key (PKCS #8: EC P-256, RSA or Ed25519): private_key_jwt instead of a secret")
	fs.StringVar(&f.MetadataURL, "oauth-client-metadata-url", "", "with --url: the https `URL` of this client's metadata document, used as its client_id where the authorization server accepts one")
	fs.StringVar(&f.Grant, "oauth-grant", oauth.GrantAuthorizationCode, "with --url: authorization_code (a person signs in in a browser), client_credentials (a machine client with --oauth-client-id and --oauth-client-secret or --oauth-client-key), jwt-bearer (a workload's identity token, --oauth-assertion-file) or id-jag (an enterprise identity provider's ID token exchanged there, --oauth-idp-token-endpoint)")
	fs.StringVar(&f.Assertion, "oauth-assertion-file", "", "with --url and --oauth-grant jwt-bearer or id-jag: the `FILE` holding the workload's identity token (a JWT from Kubernetes, a CI system, a cloud) or the identity provider's ID token, read afresh for each token")
	fs.StringVar(&f.IDPToken, "oauth-idp-token-endpoint", "", "with --oauth-grant id-jag: the enterprise identity provider's token endpoint `URL`, where the ID token is exchanged for an ID-JAG")
	fs.StringVar(&f.IDPClientID, "oauth-idp-client-id", "", "with --oauth-grant id-jag: this client's `ID` at the identity provider")
	fs.StringVar(&f.RedirectURI, "oauth-redirect-uri", "", "with --url: the loopback redirect `URI` a pre-registered client was registered with, e.g. http://127.0.0.1:8765/callback (default: a free port)")
	fs.DurationVar(&f.Timeout, "oauth-timeout", 5*time.Minute, "with --url: how long a sign-in may wait for the browser")
}

// config builds the sign-in's settings with the command's environment.
func (f *oauthFlags) config(c *cli, server *url.URL) (oauth.Config, error) {
	// The secret's ${VAR} are expanded as a --header value's are.
	expand := func(secret string) (string, error) {
		h, err := remote.ParseHeader("X-Secret: "+secret, c.lookupEnv)
		if err != nil {
			return "", errors.New(strings.TrimPrefix(err.Error(), "--header X-Secret: "))
		}
		return h.Value, nil
	}
	return f.Config(server, expand, c.getenv, c.stderr)
}

func (f *oauthFlags) set() bool    { return f.Set() }
func (f *oauthFlags) args() string { return f.Args() }

// checkOAuthArgs checks --oauth-* flags to be baked into entries as the
// shim will (oauth.Flags.Check).
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
	return f.Check()
}
