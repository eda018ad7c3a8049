//go:build !windows

package interop

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestClaudeCodeOAuth registers `mcpshim --url` with the real Claude Code
// CLI, as the README's config has it, in front of a server behind a strict
// authorization server. Claude Code's health check connects: the first
// time the shim signs in (a browser stand-in approves at once), and with a
// token kept by `mcpshim auth login` the check needs no browser at all.
func TestClaudeCodeOAuth(t *testing.T) {
	need(t, "node")
	if _, err := os.Stat(filepath.Join(bins.modules, ".bin", "claude")); err != nil {
		t.Fatalf("Claude Code is not installed in interop/node_modules (%v): run npm ci --prefix interop", err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "oauth-interop", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
	})
	srv := oauthtest.Start(t, oauthtest.Options{Scopes: []string{"mcp:tools"}, ScopeInChallenge: true,
		Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)})
	home, work, config := t.TempDir(), t.TempDir(), t.TempDir()
	browser := bins.shim + " fixture browser --url %s"
	env := []string{"-e", "XDG_CONFIG_HOME=" + config}
	add := func(name string, extra ...string) {
		// -e takes every value up to the next option: the name goes first.
		args := append(append([]string{"mcp", "add", name}, env...), extra...)
		args = append(args, "-s", "user", "--", bins.shim, "--url", srv.MCPURL())
		claude(t, home, work, args...)
	}
	status := func(name string) string {
		for _, l := range strings.Split(claude(t, home, work, "mcp", "list"), "\n") {
			if strings.HasPrefix(l, name+": ") {
				return l
			}
		}
		return ""
	}

	add("browser", "-e", "BROWSER="+browser)
	if line := status("browser"); !strings.HasSuffix(line, "✔ Connected") {
		t.Fatalf("claude mcp list: %q, want ✔ Connected after signing in\nserver: %s", line, srv.Log())
	}
	if n := len(srv.Authorize()); n != 1 {
		t.Errorf("authorization requests = %d, want 1", n)
	}

	// Ahead of time: auth login keeps a token; the entry never opens a browser.
	os.RemoveAll(filepath.Join(config, "mcpshim"))
	login := exec.Command(bins.shim, "auth", "login", "--url", srv.MCPURL())
	login.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "BROWSER="+browser)
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("mcpshim auth login: %v\n%s", err, out)
	}
	add("kept", "-e", "BROWSER=false")
	if line := status("kept"); !strings.HasSuffix(line, "✔ Connected") {
		t.Fatalf("claude mcp list: %q, want ✔ Connected with the kept token\nserver: %s", line, srv.Log())
	}
	if n := len(srv.Authorize()); n != 2 {
		t.Errorf("authorization requests = %d, want 2: the first entry's and auth login's, none for the kept token", n)
	}
}
