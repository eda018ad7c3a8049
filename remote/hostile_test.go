package remote_test

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The secrets a hostile server tries to get out of the bridge.
const (
	tokenSecret = "tok-bearer-secret-7781"
	keySecret   = "key-header-secret-4412"
	userSecret  = "pw-userinfo-secret-1"
	codeSecret  = "oauthcode-secret-55"
	querySecret = "apikey-query-secret-66"
)

var secrets = []string{tokenSecret, keySecret, userSecret, codeSecret, querySecret}

// credentialArgs are the shim flags that hand it every kind of credential.
func credentialArgs() []string {
	return []string{"--header", "Authorization: Bearer " + tokenSecret, "--header", "X-Api-Key: " + keySecret}
}

// leaks reports which secrets appear in the ledger, stderr or what the
// client got.
func leaks(t *testing.T, ledger, stderr string, wire []map[string]any) []string {
	t.Helper()
	data, _ := os.ReadFile(ledger)
	var found []string
	for _, s := range secrets {
		if strings.Contains(string(data), s) {
			found = append(found, s+" in the ledger")
		}
		if strings.Contains(stderr, s) {
			found = append(found, s+" on stderr")
		}
		if strings.Contains(mustJSON(wire), s) {
			found = append(found, s+" on the client's wire")
		}
	}
	return found
}

// recorder is a server that records every request it gets: the other
// origin a redirect points at.
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.String()+" "+mustJSON(req.Header))
	r.mu.Unlock()
	http.Error(w, "not here", http.StatusTeapot)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// TestRedirectRefused: the MCP endpoint redirects to another origin (another
// port on 127.0.0.1) with 307, 308, 302 and 301. Nothing reaches the other
// origin, the request gets an error naming the status and where it pointed
// (without its query), and the ledger records the redirect.
func TestRedirectRefused(t *testing.T) {
	for _, status := range []int{307, 308, 302, 301} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			var other recorder
			elsewhere := serve(t, "127.0.0.1:0", &other)
			s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://"+elsewhere.addr+"/mcp?code="+codeSecret, status)
			}))
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, append(credentialArgs(), "--url", s.url())...))
			c.send(initialize)
			a := c.answer(1)
			msg := errorMessage(a)
			if !strings.Contains(msg, http.StatusText(status)) || !strings.Contains(msg, elsewhere.addr) {
				t.Errorf("the request got %v, want an error naming %d and the Location", a, status)
			}
			if got := other.got(); len(got) != 0 {
				t.Errorf("the other origin got %d requests, want none:\n%s", len(got), strings.Join(got, "\n"))
			}
			c.in.Close()
			c.exitCode()
			r := waitEvent(t, ledger, "redirect_refused", 1)[0]
			if r["status"] != float64(status) || !strings.Contains(r.str("location"), elsewhere.addr) {
				t.Errorf("redirect_refused = %s, want status %d and the location", mustJSON(r), status)
			}
			if l := leaks(t, ledger, stderrOf(c.cmd), []map[string]any{a}); len(l) > 0 {
				t.Errorf("leaked: %s", strings.Join(l, ", "))
			}
		})
	}
}

// TestRedirectSameOrigin: a 307 to the same origin (/mcp to /mcp/, as a
// mounted app answers) is followed with the body and the credentials, and
// the ledger shows the hop.
func TestRedirectSameOrigin(t *testing.T) {
	var ran counters
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, nil)
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, "/mcp/", http.StatusTemporaryRedirect)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+tokenSecret {
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, append(credentialArgs(), "--url", s.url())...)
	got := runSession(t, &mcp.CommandTransport{Command: cmd}, "2025-11-25")
	if !strings.Contains(got.Call, "hello") {
		t.Fatalf("the call through a same-origin redirect got %s\nstderr:\n%s", got.Call, stderrOf(cmd))
	}
	waitEvent(t, ledger, "disconnected", 1)
	hops := 0
	for _, r := range events(readLedger(t, ledger), "http_exchange") {
		if r["status"] == 307.0 && r.str("location") == "/mcp/" {
			hops++
		}
	}
	if hops == 0 {
		t.Errorf("no http_exchange records the 307 hop:\n%s", eventList(readLedger(t, ledger)))
	}
}

// rawServer answers every connection with the bytes respond returns for the
// request it read: responses net/http would never write.
func rawServer(t *testing.T, respond func(req *http.Request) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// Exits when the test closes the listener.
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			// Exits when the response is written.
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				conn.Write([]byte(respond(req)))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSecretsInErrors: the URL carries a password and query secrets, the
// headers carry a token and a key, and the server answers with a broken
// response that echoes the token in an invalid header. Go's error text
// quotes the URL and the header line; none of the secrets may reach the
// ledger, stderr or the client.
func TestSecretsInErrors(t *testing.T) {
	for name, response := range map[string]string{
		"malformed status": "garbage " + tokenSecret + "\r\n\r\n",
		"invalid header":   "HTTP/1.1 200 OK\r\nX-Echo Bearer " + tokenSecret + " " + keySecret + "\r\n\r\n",
		"cut body":         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := rawServer(t, func(*http.Request) string { return response })
			u := "http://alice:" + userSecret + "@" + addr + "/mcp?code=" + codeSecret + "&api_key=" + querySecret
			ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
			c := startRaw(t, shimCommand(t, ledger, append(credentialArgs(), "--url", u)...))
			c.send(initialize)
			a := c.answer(1)
			if errorMessage(a) == "" {
				t.Fatalf("initialize got %v, want an error", a)
			}
			c.in.Close()
			c.exitCode()
			if l := leaks(t, ledger, stderrOf(c.cmd), []map[string]any{a}); len(l) > 0 {
				t.Errorf("leaked: %s\nerror: %s\nstderr:\n%s", strings.Join(l, ", "), mustJSON(a), stderrOf(c.cmd))
			}
		})
	}
}

// TestBadURLHidesPassword: a --url the shim refuses is named without its
// password or query values.
func TestBadURLHidesPassword(t *testing.T) {
	for _, u := range []string{"ftp://alice:" + userSecret + "@h/mcp?code=" + codeSecret, "http://alice:" + userSecret + "@/mcp", "http://alice:" + userSecret + "@h/%zz?api_key=" + querySecret} {
		c := startRaw(t, shimCommand(t, filepath.Join(t.TempDir(), "l.jsonl"), "--url", u))
		if code := c.exitCode(); code != 64 {
			t.Errorf("--url %q: exit %d, want 64", u, code)
		}
		if l := leaks(t, "", stderrOf(c.cmd), nil); len(l) > 0 {
			t.Errorf("--url %q: leaked %s:\n%s", u, strings.Join(l, ", "), stderrOf(c.cmd))
		}
	}
}

// TestChallengeOnTerminal: a WWW-Authenticate with a bidi override, refusing
// the user's own token, reaches stderr escaped, and a server named auth
// keeps its name in its lines.
func TestChallengeOnTerminal(t *testing.T) {
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Bearer realm=\"evil\u202egnp.exe\"")
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, append(credentialArgs(), "--url", s.url())...)
	cmd.Args[2] = "auth" // --name auth
	c := startRaw(t, cmd)
	c.send(initialize)
	c.answer(1)
	c.in.Close()
	c.exitCode()
	stderr := stderrOf(c.cmd)
	if strings.ContainsRune(stderr, '\u202e') {
		t.Errorf("stderr carries a raw U+202E:\n%s", stderr)
	}
	if !strings.Contains(stderr, "mcpshim auth: HTTP 401") {
		t.Errorf("stderr lacks the line \"mcpshim auth: HTTP 401\":\n%s", stderr)
	}
}
