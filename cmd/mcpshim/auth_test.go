package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// authRun runs the built mcpshim with a config directory of its own.
func authRun(t *testing.T, config string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(builtShim(t), args...)
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+config, "BROWSER="+builtShim(t)+" fixture browser --url %s"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestAuthLoginStatusLogout: sign in ahead of time with a pre-registered
// client whose secret comes from the environment, list it without any
// secret, sign out (revoked at the server, gone from disk).
func TestAuthLoginStatusLogout(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{PreRegistered: map[string]string{"cli-client": "cli-s3cret-value"}, NoRegistration: true,
		Scopes: []string{"mcp:tools"}, ScopeInChallenge: true})
	config := t.TempDir()
	secretEnv := []string{"CLIENT_SECRET=cli-s3cret-value"}
	code, out, errs := authRun(t, config, secretEnv, "auth", "login", "--url", srv.MCPURL(), "--oauth-client-id", "cli-client", "--oauth-client-secret", "${CLIENT_SECRET}")
	if code != 0 || !strings.Contains(out, "signed in to "+srv.MCPURL()) {
		t.Fatalf("auth login: exit %d\nstdout: %s\nstderr: %s\nserver: %s", code, out, errs, srv.Log())
	}
	for _, want := range []string{"auth_required status=401", "authorization_started", "client=pre-registered", "authorized", "/authorize?"} {
		if !strings.Contains(errs, want) {
			t.Errorf("login's stderr lacks %q:\n%s", want, errs)
		}
	}
	if a := srv.Authorize()[0]; a.Get("scope") != "mcp:tools" || a.Get("client_id") != "cli-client" {
		t.Errorf("authorization request %v, want the challenge's scope and the pre-registered client", a)
	}

	code, out, errs = authRun(t, config, nil, "auth", "status", "--json")
	var st struct {
		Dir     string         `json:"dir"`
		Servers []oauth.Status `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || len(st.Servers) != 1 {
		t.Fatalf("auth status --json: exit %d, %v\n%s%s", code, err, out, errs)
	}
	if e := st.Servers[0]; e.Server != srv.MCPURL() || e.Issuer != srv.Issuer() || e.ClientID != "cli-client" || !e.Refresh || !strings.HasPrefix(e.State, "valid") {
		t.Errorf("status entry %+v", e)
	}
	_, text, _ := authRun(t, config, nil, "auth", "status")
	all := out + text
	for _, s := range append(srv.Issued(), "cli-s3cret-value") {
		if strings.Contains(all, s) {
			t.Errorf("auth status shows a token or the secret")
		}
	}
	data, _ := os.ReadFile(st.Servers[0].TokenFile)
	if strings.Contains(string(data), "cli-s3cret-value") {
		t.Errorf("the pre-registered client's secret was written to the token file")
	}

	code, out, errs = authRun(t, config, secretEnv, "auth", "logout", srv.MCPURL(), "--oauth-client-secret", "${CLIENT_SECRET}")
	if code != 0 || !strings.Contains(out, "revoked at "+srv.Issuer()) {
		t.Fatalf("auth logout: exit %d\n%s%s\nserver: %s", code, out, errs, srv.Log())
	}
	if files, _ := filepath.Glob(filepath.Join(config, "mcpshim", "auth", "*.json")); len(files) != 0 {
		t.Errorf("token files left after logout: %v", files)
	}
	if code, _, errs = authRun(t, config, nil, "auth", "logout", srv.MCPURL()); code != exitConfig || !strings.Contains(errs, "no sign-in kept") {
		t.Errorf("a second logout: exit %d %s, want %d and a clear message", code, errs, exitConfig)
	}
}

func TestAuthUsageErrors(t *testing.T) {
	config := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"auth", "login"}, "--url"},
		{[]string{"auth", "login", "--url", "https://x.example/mcp", "--oauth-grant", "password"}, "want authorization_code, client_credentials, jwt-bearer or id-jag"},
		{[]string{"auth", "login", "--url", "https://x.example/mcp", "--oauth-grant", "client_credentials"}, "needs a pre-registered client"},
		{[]string{"auth", "login", "--url", "https://x.example/mcp", "--oauth-client-metadata-url", "http://x.example/c.json"}, "want an https URL with a path"},
		{[]string{"auth", "login", "--url", "https://x.example/mcp", "--oauth-client-id", "a", "--oauth-client-secret", "${UNSET_SECRET_VAR}"}, "UNSET_SECRET_VAR is not set"},
		{[]string{"auth", "logni"}, "did you mean login?"},
		{[]string{"--url", "https://x.example/mcp", "--header", "Authorization: Bearer x", "--oauth-client-id", "a"}, "either sends your credential or signs in"},
	} {
		code, _, errs := authRun(t, config, nil, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, exitUsage, tc.want)
		}
	}
}
