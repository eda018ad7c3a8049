//go:build !windows

package remote_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestLocalFaults: a fault on this side of the wire is no outage, and time
// does not mend it (issue 34 item 17): a control character in a --header
// value or in the token the authorization server issued, a session id no
// header can carry, a certificate this machine does not trust. The request
// fails at once saying what is wrong; nothing is scheduled, nothing retried.
func TestLocalFaults(t *testing.T) {
	noReconnect := func(t *testing.T, ledger string) {
		t.Helper()
		if n := len(events(readLedger(t, ledger), "reconnect_scheduled")); n != 0 {
			t.Errorf("%d reconnect_scheduled for a local fault, want 0:\n%s", n, eventList(readLedger(t, ledger)))
		}
	}
	t.Run("header", func(t *testing.T) {
		t.Parallel()
		s := serve(t, "127.0.0.1:0", http.NotFoundHandler())
		ledger := filepath.Join(t.TempDir(), "l.jsonl")
		c := startRaw(t, shimCommand(t, ledger, "--url", s.url(), "--header", "X-Api-Key: ${K}"), "K=abc\x01def")
		c.send(initialize)
		msg := errorMessage(c.answer(1))
		if !strings.Contains(msg, "X-Api-Key") || !strings.Contains(msg, "control character") || strings.Contains(msg, "abc") {
			t.Errorf("initialize with a control character in a --header value got %q, want an error naming the header and the control character, not its value", msg)
		}
		noReconnect(t, ledger)
	})
	t.Run("token", func(t *testing.T) {
		t.Parallel()
		var ran counters
		srv := oauthServers(t, &ran, oauthtest.Options{TokenSuffix: "\x01"})
		ledger := filepath.Join(t.TempDir(), "l.jsonl")
		c := startRaw(t, shimCommand(t, ledger, "--url", srv.MCPURL()), "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+shim+" fixture browser --url %s")
		c.send(initialize)
		if msg := errorMessage(c.answer(1)); !strings.Contains(msg, "control character") || strings.Contains(msg, "unreachable") {
			t.Errorf("initialize with a token holding a control character got %q, want an error saying so", msg)
		}
		c.send(strings.Replace(initialize, `"id":1`, `"id":2`, 1))
		if msg := errorMessage(c.answer(2)); !strings.Contains(msg, "control character") {
			t.Errorf("the next initialize got %q, want the same error", msg)
		}
		noReconnect(t, ledger)
	})
	t.Run("session-id", func(t *testing.T) {
		t.Parallel()
		s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "sess\x01ion")
			if strings.Contains(string(body), `"initialize"`) {
				w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"bad-session","version":"1"}}}`))
				return
			}
			w.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`))
		}))
		ledger := filepath.Join(t.TempDir(), "l.jsonl")
		c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
		c.send(initialize)
		if msg := errorMessage(c.answer(1)); !strings.Contains(msg, "Mcp-Session-Id") {
			t.Errorf("initialize answered with an Mcp-Session-Id holding a control character got %q, want an error naming it", msg)
		}
		c.send(call(2, "echo"))
		if msg := errorMessage(c.answer(2)); strings.Contains(msg, "unreachable") {
			t.Errorf("the next call got %q: a bad session id is no outage", msg)
		}
		noReconnect(t, ledger)
	})
	t.Run("certificate", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
		srv.StartTLS()
		defer srv.Close()
		ledger := filepath.Join(t.TempDir(), "l.jsonl")
		c := startRaw(t, shimCommand(t, ledger, "--url", srv.URL+"/mcp"), "SSL_CERT_FILE="+filepath.Join(t.TempDir(), "none.pem"))
		c.send(initialize)
		for id := 1; id <= 2; id++ {
			if id == 2 {
				c.send(strings.Replace(initialize, `"id":1`, `"id":2`, 1))
			}
			msg := errorMessage(c.answer(float64(id)))
			if !strings.Contains(msg, "certificate") || !strings.Contains(msg, "SSL_CERT_FILE") || strings.Contains(msg, "unreachable") {
				t.Errorf("initialize %d against a self-signed certificate got %q, want the certificate's problem and how to trust a CA (SSL_CERT_FILE)", id, msg)
			}
		}
		if failed := waitEvent(t, ledger, "connect_failed", 1)[0]; failed.str("error_class") != "tls" {
			t.Errorf("connect_failed = %s, want error_class tls", mustJSON(failed))
		}
		noReconnect(t, ledger)
	})
}
