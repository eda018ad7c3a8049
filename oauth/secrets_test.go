package oauth_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestSecrets: what a Session must keep out of every log is in Secrets, as
// the authorization server received and issued it: the registered client's
// secret, the code and its verifier, the tokens; a pre-registered secret
// before any sign-in; each URL-encoded too.
func TestSecrets(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{AuthMethods: []string{"client_secret_basic"}})
	var st steps
	s := session(t, srv, nil, &st, nil)
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("status after sign-in = %d\n%s", got, srv.Log())
	}
	got := s.Secrets()
	var want []string
	for _, f := range srv.Tokens() {
		for _, k := range []string{"code", "code_verifier"} {
			want = append(want, f.Get(k))
		}
	}
	want = append(want, srv.Issued()...)
	if len(want) < 4 {
		t.Fatalf("the server saw %v, want a code, a verifier and two tokens", want)
	}
	for _, v := range want {
		if v != "" && !slices.Contains(got, v) {
			t.Errorf("Secrets lacks %.6s… (%d values)", v, len(got))
		}
	}
	for i := 1; i < len(got); i++ {
		if len(got[i]) > len(got[i-1]) {
			t.Errorf("Secrets not longest first: %d before %d", len(got[i-1]), len(got[i]))
		}
	}

	u, _ := url.Parse(srv.MCPURL())
	pre, err := oauth.New(oauth.Config{Server: u, ClientID: "app", ClientSecret: "s3cret/with+slash"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pre.Secrets(); !slices.Contains(got, "s3cret/with+slash") || !slices.Contains(got, url.QueryEscape("s3cret/with+slash")) {
		t.Errorf("a pre-registered secret's Secrets = %q, want it plain and URL-encoded", got)
	}
}
