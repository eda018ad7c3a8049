package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestSignInRedirectsStayOnOrigin: the authorization server's revocation
// endpoint answers mcpshim auth logout with a 307 to another origin, and
// the resource's metadata answers with a 307 to another origin. Neither is
// followed: the other origin gets no refresh token, no access token, no
// client secret, no request at all. Shown to fail before the fix: the
// logout re-POSTed the tokens and the Basic secret there, and the metadata
// GET followed.
func TestSignInRedirectsStayOnOrigin(t *testing.T) {
	var other recorder
	elsewhere := serve(t, "127.0.0.1:0", &other)
	srv := oauthtest.Start(t, oauthtest.Options{PreRegistered: map[string]string{"cli-client": "cli-s3cret-value-9"}, NoRegistration: true})
	config := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(shim, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "CS=cli-s3cret-value-9", "BROWSER="+shim+" fixture browser --url %s")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("auth", "login", "--url", srv.MCPURL(), "--oauth-client-id", "cli-client", "--oauth-client-secret", "${CS}"); err != nil {
		t.Fatalf("auth login: %v\n%s\n%s", err, out, srv.Log())
	}
	srv.Redirect("/revoke", "http://"+elsewhere.addr+"/revoke")
	out, err := run("auth", "logout", srv.MCPURL(), "--oauth-client-secret", "${CS}")
	if err != nil || !strings.Contains(out, "signed out of") || !strings.Contains(out, "307") {
		t.Errorf("auth logout against a revocation endpoint that redirects away: %v\n%s\nwant signed out, and the 307 named", err, out)
	}
	if files, _ := filepath.Glob(filepath.Join(config, "mcpshim", "auth", "*.json")); len(files) != 0 {
		t.Errorf("token files left after logout: %v", files)
	}

	srv.Redirect("/.well-known/oauth-protected-resource/mcp", "http://"+elsewhere.addr+"/prm")
	if out, err := run("auth", "login", "--url", srv.MCPURL(), "--oauth-client-id", "cli-client", "--oauth-client-secret", "${CS}", "--oauth-timeout", "5s"); err == nil {
		t.Errorf("a sign-in whose resource metadata redirects to another origin succeeded:\n%s", out)
	}
	if got := other.got(); len(got) != 0 {
		t.Errorf("the other origin got %d requests, want none:\n%s", len(got), strings.Join(got, "\n"))
	}
}
