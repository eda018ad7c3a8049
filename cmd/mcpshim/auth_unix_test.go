//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestAuthStatusEscapesScope: a scope the authorization server granted
// with a newline and a tab in it is shown escaped on its row: it printed
// them as they are, and drew a row of its own in the table (issue 34 item
// 11).
func TestAuthStatusEscapesScope(t *testing.T) {
	config := t.TempDir()
	store := &oauth.Store{Dir: filepath.Join(config, "mcpshim", "auth")}
	now := time.Now()
	rec := &oauth.Record{Version: 1, Server: "https://mcp.example.test/mcp", ClientKey: oauth.ClientKey("", ""), Issuer: "https://as.example.test",
		Token: &oauth.Token{AccessToken: "at-x", TokenType: "Bearer", Scope: "mcp:tools\nhttps://evil.example.test/mcp\tregistered\thttps://evil\t-\tvalid", Obtained: now, Expiry: now.Add(time.Hour)}, Updated: now}
	if err := store.Save(rec); err != nil {
		t.Fatal(err)
	}
	code, out, errs := authRun(t, config, nil, "auth", "status")
	if code != 0 {
		t.Fatalf("auth status: exit %d\n%s%s", code, out, errs)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(out, `mcp:tools\nhttps://evil.example.test/mcp\t`) {
		t.Errorf("auth status printed %d lines, want the header and one row with the scope's newline and tab escaped:\n%s", len(lines), out)
	}
}

// TestTokenStoreParentOfAnotherUser: the token directory's parent belongs
// to another user, who could put a directory of their own in its place:
// signing in refuses, saying so (issue 34 item 11); it was accepted.
func TestTokenStoreParentOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	srv := oauthtest.Start(t, oauthtest.Options{Scopes: []string{"mcp:tools"}, ScopeInChallenge: true})
	config := t.TempDir()
	parent := filepath.Join(config, "mcpshim")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(parent, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	code, out, errs := authRun(t, config, nil, "auth", "login", "--url", srv.MCPURL())
	if code == 0 || !strings.Contains(errs, parent) || !strings.Contains(errs, "another user") {
		t.Errorf("auth login with the store's parent owned by another user: exit %d, want an error naming %s and its owner\nstdout: %s\nstderr: %s", code, parent, out, errs)
	}
	if n := len(srv.Authorize()); n != 0 {
		t.Errorf("%d authorization requests, want none before the store is safe", n)
	}
}
