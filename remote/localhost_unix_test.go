//go:build !windows

package remote_test

import (
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestLocalhostRedirectSquatted: a pre-registered client's redirect URI
// names localhost, and another local process listens on [::1] at its port.
// A browser that resolves localhost to ::1 (RFC 6724 puts it first) would
// hand that process the code: the shim binds both loopback addresses, and
// refuses to sign in when it cannot, saying why (issue 34 item 11). It
// bound 127.0.0.1 only, and the squatter took the callback.
func TestLocalhostRedirectSquatted(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()
	sq, err := net.Listen("tcp", "[::1]:"+port)
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var codes atomic.Int64
	go http.Serve(sq, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("code") != "" {
			codes.Add(1)
		}
		w.Write([]byte("thanks"))
	}))
	t.Cleanup(func() { sq.Close() })

	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{PreRegistered: map[string]string{"app": ""}})
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	redirect := "http://localhost:" + port + "/callback"
	c := startRaw(t, shimCommand(t, ledger, "--url", srv.MCPURL(), "--oauth-client-id", "app", "--oauth-redirect-uri", redirect, "--oauth-timeout", "3s"),
		"XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+shim+" fixture browser --url %s")
	c.send(initialize)
	msg := errorMessage(c.answer(1))
	if n := codes.Load(); n != 0 {
		t.Errorf("the process on [::1]:%s got %d authorization codes", port, n)
	}
	if !strings.Contains(msg, "[::1]:"+port) || !strings.Contains(msg, "127.0.0.1") {
		t.Errorf("initialize got %q, want an error naming [::1]:%s and the IP literal to use", msg, port)
	}
}
