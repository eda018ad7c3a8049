//go:build !windows

package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A credential the server was given in its env, which it echoes in a shape
// no rule knows, is hidden in the result and in the cache: GITHUB_PAT counts
// as redact counts it, not only names holding TOKEN or KEY.
func TestGivenCredentialsAreHidden(t *testing.T) {
	const pat = "given-value-1234"
	target := Target{Name: "gh", Command: "sh", Args: []string{"-c", `echo "login refused for $GITHUB_PAT" >&2; exit 1`},
		Env: map[string]string{"GITHUB_PAT": pat}}
	r := probeOne(t, target, 20*time.Second)
	path := filepath.Join(t.TempDir(), "probe.json")
	c := openCache(t, path)
	c.Store(target, Options{}, r)
	if err := c.Save(time.Now()); err != nil {
		t.Fatal(err)
	}
	cached, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	report, _ := json.Marshal(r)
	if !strings.Contains(strings.Join(r.StderrTail, "\n"), "login refused for [REDACTED]") ||
		strings.Contains(string(report), pat) || strings.Contains(string(cached), pat) {
		t.Fatalf("server echoing GITHUB_PAT=%s: got stderr %q, report %s, cache %s; want the value hidden everywhere", pat, r.StderrTail, report, cached)
	}
}
