package remote_test

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProxyFromEnvironment: the bridge takes the proxy the environment
// names, as the sign-in's requests do (issue 34 item 11): HTTP_PROXY for an
// http:// server whose name only the proxy knows, and connected records
// which proxy. It dialled the server itself (a DNS failure, an outage).
func TestProxyFromEnvironment(t *testing.T) {
	var ran counters
	s := serve(t, "127.0.0.1:0", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil))
	var proxied atomic.Int64
	// A forward proxy: the request line holds the whole URL; the name
	// mcp.proxied.test is the proxy's to resolve, here to the server.
	proxy := serve(t, "127.0.0.1:0", &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			proxied.Add(1)
			u := *r.In.URL
			u.Host = s.addr
			r.Out.URL = &u
			r.Out.Host = s.addr // the go-sdk handler refuses a Host that is not its own
		},
		FlushInterval: -1,
	})
	_, port, _ := strings.Cut(s.addr, ":")
	target := "http://mcp.proxied.test:" + port + "/mcp"
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	cmd := shimCommand(t, ledger, "--url", target)
	proxyURL := "http://" + proxy.addr
	cmd.Env = append(os.Environ(), "HTTP_PROXY="+proxyURL, "http_proxy="+proxyURL, "NO_PROXY=", "no_proxy=")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs := connect(t, ctx, &mcp.CommandTransport{Command: cmd}, "")
	if got, err := echo(ctx, cs, "via-proxy"); err != nil || got != "via-proxy" {
		t.Fatalf("echo through HTTP_PROXY = %q, %v\nstderr:\n%s", got, err, stderrOf(cmd))
	}
	cs.Close()
	if proxied.Load() == 0 {
		t.Errorf("no request went through the proxy")
	}
	conn := waitEvent(t, ledger, "connected", 1)[0]
	if got, want := conn.str("proxy"), (&url.URL{Scheme: "http", Host: proxy.addr}).String(); got != want {
		t.Errorf("connected proxy = %q, want %q: %s", got, want, mustJSON(conn))
	}
}
