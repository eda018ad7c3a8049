//go:build !windows

package remote_test

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTLS: over https the connected record carries the TLS facts; a
// certificate the shim does not trust is connect_failed with error_class
// tls, and the client's initialize gets an error at once.
func TestTLS(t *testing.T) {
	var ran counters
	srv := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	certFile := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/mcp"

	trusted := filepath.Join(dir, "trusted.jsonl")
	cmd := shimCommand(t, trusted, "--url", url)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+certFile) // Go reads the roots from it
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs := connect(t, ctx, &mcp.CommandTransport{Command: cmd}, "")
	if got, err := echo(ctx, cs, "secure"); err != nil || got != "secure" {
		t.Fatalf("echo over https = %q, %v\nstderr:\n%s", got, err, stderrOf(cmd))
	}
	cs.Close()
	conn := waitEvent(t, trusted, "connected", 1)[0]
	if conn["tls"] != true || conn.str("tls_version") == "" || conn.str("cipher_suite") == "" || conn.str("cert_not_after") == "" {
		t.Errorf("connected over https = %s, want the TLS facts", mustJSON(conn))
	}

	untrusted := filepath.Join(dir, "untrusted.jsonl")
	c := startRaw(t, shimCommand(t, untrusted, "--url", url, "--backoff", "50ms", "--backoff-max", "100ms"))
	c.send(initialize)
	if msg := errorMessage(c.answer(1)); msg == "" {
		t.Fatal("initialize against an untrusted certificate got no error")
	}
	failed := waitEvent(t, untrusted, "connect_failed", 1)[0]
	if failed.str("error_class") != "tls" {
		t.Errorf("connect_failed = %s, want error_class tls", mustJSON(failed))
	}
}
