package remote_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestSignInStorm: a server that refuses every token, one that asks for a
// new scope at every step-up, and an authorization server that refuses
// every code, each met by five client messages (issue 34 item 9). Before:
// 8 browser openings and 7 refreshes, 15 openings, a registration per
// failed sign-in. Now a shim gets at most 3 new tokens or sign-ins in a row
// that the server does not take, then says so at once to every request,
// and registers its client once.
func TestSignInStorm(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
	}{
		{"refuses-every-token", oauthtest.Options{RefuseTokens: true}},
		{"rotating-step-up", oauthtest.Options{RotateScopes: true}},
		{"refuses-every-code", oauthtest.Options{RefuseCodes: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran counters
			srv := oauthServers(t, &ran, tc.opts)
			ledger := filepath.Join(t.TempDir(), "l.jsonl")
			c := startRaw(t, shimCommand(t, ledger, "--url", srv.MCPURL()), "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+shim+" fixture browser --url %s")
			var last string
			for id := 1; id <= 5; id++ {
				c.send(strings.Replace(initialize, `"id":1`, fmt.Sprintf(`"id":%d`, id), 1))
				last = errorMessage(c.answer(float64(id)))
				if last == "" {
					t.Fatalf("message %d got no error from a server that takes no token", id)
				}
			}
			opened, refreshed, registered := len(srv.Authorize()), srv.Grants("refresh_token"), len(srv.Registers())
			if opened+refreshed > 3 || registered != 1 {
				t.Errorf("5 messages: %d browser sign-ins, %d refreshes, %d registrations; want at most 3 sign-ins and refreshes in all, and 1 registration\n%s", opened, refreshed, registered, srv.Log())
			}
			if !strings.Contains(last, "stopped signing in") || !strings.Contains(last, "mcpshim auth login --url "+srv.MCPURL()) {
				t.Errorf("the last message got %q, want an error saying the shim stopped signing in and what to run", last)
			}
		})
	}
}
