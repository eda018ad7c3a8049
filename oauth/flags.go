package oauth

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Flags are the --oauth-* flags of mcpshim --url, mcpshim auth login and
// wrap --remote, as given.
type Flags struct {
	ClientID     string
	ClientSecret string // as written: a ${VAR} reference, expanded by Config
	ClientKey    string
	Assertion    string
	IDPToken     string
	IDPClientID  string
	MetadataURL  string
	Grant        string
	RedirectURI  string
	Timeout      time.Duration
}

// maxBrowserWait bounds --oauth-timeout.
const maxBrowserWait = 24 * time.Hour

var errSecretWithoutID = errors.New("--oauth-client-secret or --oauth-client-key without --oauth-client-id: give the client's id too")

// Config builds the sign-in's settings: the secret expanded by expand (its
// ${VAR} read as a --header value's are), the store under the user's config
// directory. The error says what to fix.
func (f *Flags) Config(server *url.URL, expand func(string) (string, error), getenv func(string) string, prompt io.Writer) (Config, error) {
	secret := f.ClientSecret
	if secret != "" {
		var err error
		if secret, err = expand(secret); err != nil {
			return Config{}, fmt.Errorf("--oauth-client-secret: %v", err)
		}
	}
	if (secret != "" || f.ClientKey != "") && f.ClientID == "" {
		return Config{}, errSecretWithoutID
	}
	if f.Timeout <= 0 || f.Timeout > maxBrowserWait {
		return Config{}, fmt.Errorf("--oauth-timeout %v: want more than 0, at most 24h", f.Timeout)
	}
	cfg := Config{Server: server, ClientID: f.ClientID, ClientSecret: secret, ClientMetadataURL: f.MetadataURL,
		Grant: f.Grant, AssertionFile: f.Assertion, IDPTokenEndpoint: f.IDPToken, IDPClientID: f.IDPClientID,
		RedirectURI: f.RedirectURI, BrowserWait: f.Timeout, Getenv: getenv, Prompt: prompt}
	if f.ClientKey != "" {
		key, err := ReadClientKey(f.ClientKey)
		if err != nil {
			return Config{}, err
		}
		cfg.ClientKey = key
	}
	// With no config directory (no HOME) tokens live as long as the process.
	if dir, err := DefaultDir(getenv); err == nil {
		cfg.Store = &Store{Dir: dir}
	}
	return cfg, nil
}

// Check checks the flags as a shim given them will, the secret's ${VAR}
// aside (wrap bakes them into entries: the secret is expanded in the entry's
// environment, not wrap's).
func (f Flags) Check() error {
	if f.ClientSecret != "" {
		f.ClientSecret = "placeholder"
	}
	if f.ClientKey != "" {
		if _, err := ReadClientKey(f.ClientKey); err != nil {
			return err
		}
	}
	_, err := New(Config{Server: &url.URL{Scheme: "https", Host: "example.com", Path: "/mcp"}, ClientID: f.ClientID,
		ClientSecret: f.ClientSecret, ClientMetadataURL: f.MetadataURL, Grant: f.Grant, AssertionFile: f.Assertion,
		IDPTokenEndpoint: f.IDPToken, IDPClientID: f.IDPClientID, RedirectURI: f.RedirectURI})
	if err == nil && (f.ClientSecret != "" || f.ClientKey != "") && f.ClientID == "" {
		err = errSecretWithoutID
	}
	return err
}

// Set tells whether any flag but --oauth-timeout was given.
func (f *Flags) Set() bool {
	return f.ClientID != "" || f.ClientSecret != "" || f.ClientKey != "" || f.Assertion != "" || f.IDPToken != "" ||
		f.IDPClientID != "" || f.MetadataURL != "" || f.Grant != GrantAuthorizationCode || f.RedirectURI != ""
}

// Args are the flags as given, to print in a command the user can run: a
// secret only as its ${VAR} reference, never the secret itself.
func (f *Flags) Args() string {
	var b strings.Builder
	add := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " --%s %s", name, v)
		}
	}
	add("oauth-client-id", f.ClientID)
	switch {
	case strings.Contains(f.ClientSecret, "${"):
		add("oauth-client-secret", "'"+f.ClientSecret+"'")
	case f.ClientSecret != "":
		add("oauth-client-secret", "'${SECRET}'")
	}
	add("oauth-client-key", f.ClientKey)
	add("oauth-assertion-file", f.Assertion)
	add("oauth-idp-token-endpoint", f.IDPToken)
	add("oauth-idp-client-id", f.IDPClientID)
	add("oauth-client-metadata-url", f.MetadataURL)
	if f.Grant != GrantAuthorizationCode {
		add("oauth-grant", f.Grant)
	}
	add("oauth-redirect-uri", f.RedirectURI)
	return b.String()
}
