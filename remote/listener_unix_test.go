//go:build !windows

package remote_test

import (
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestRedirectListenerFlood: while a shim waits at the browser step, a
// local process floods its loopback redirect listener with endless header
// lines on 8 connections for 3 s. The shim's memory stays bounded (its
// peak RSS is logged for the notes), and the real callback that comes
// after is still taken, once. Shown to fail before the fix: the header
// lines were read whole and the peak grew past 1 GB. Unix only: the person
// is a sh script standing in for the browser, and VmHWM is Linux's.
func TestRedirectListenerFlood(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{})
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "url")
	browser := filepath.Join(dir, "browser")
	os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" > "+urlFile+".tmp && mv "+urlFile+".tmp "+urlFile+"\n"), 0o755)
	ledger := filepath.Join(dir, "l.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.MCPURL())
	c := startRaw(t, cmd, "XDG_CONFIG_HOME="+t.TempDir(), "BROWSER="+browser)
	c.send(initialize)
	var authURL string
	for end := time.Now().Add(deadline); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(urlFile); err == nil {
			authURL = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the browser was never opened\n%s", stderrOf(cmd))
		}
	}
	au, _ := url.Parse(authURL)
	redirect, _ := url.Parse(au.Query().Get("redirect_uri"))
	if !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(redirect.Host) {
		t.Fatalf("redirect_uri %q", redirect)
	}
	chunk := []byte(strings.Repeat("a", 64<<10))
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				conn, err := net.Dial("tcp", redirect.Host)
				if err != nil {
					return
				}
				conn.Write([]byte("GET /callback HTTP/1.1\r\nHost: x\r\nX-Flood: "))
				for time.Now().Before(stop) {
					conn.SetWriteDeadline(stop)
					if _, err := conn.Write(chunk); err != nil {
						break
					}
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("the shim's peak RSS after a 3 s header flood on 8 connections: %.1f MiB", float64(peak)/(1<<20))
	if peak > 80<<20 {
		t.Errorf("the shim's peak RSS under a header flood is %.1f MiB, want under 80 MiB", float64(peak)/(1<<20))
	}
	// The person finishes in the browser: the callback is taken.
	if out, err := exec.Command(shim, "fixture", "browser", "--url", authURL).CombinedOutput(); err != nil {
		t.Fatalf("the real callback after the flood: %v\n%s", err, out)
	}
	if a := c.answer(1); a["result"] == nil {
		t.Fatalf("initialize after the flood and the sign-in got %v\n%s", a, stderrOf(cmd))
	}
	c.in.Close()
	c.exitCode()
}
