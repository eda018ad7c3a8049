package probe

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

func TestTTL(t *testing.T) {
	cases := map[Outcome]time.Duration{
		Ready: 15 * time.Minute, Timeout: 0, Exited: time.Hour, ProtocolError: time.Hour,
		AuthRequired: time.Hour, Unreachable: 0,
	}
	for o, want := range cases {
		if got := TTL(o); got != want {
			t.Errorf("TTL(%s) = %s, want %s", o, got, want)
		}
	}
}

func TestCacheLifetimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpshim", "probe-cache.json")
	now := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	ready := Target{Name: "ready", Command: "srv"}
	crashed := Target{Name: "crashed", Command: "srv", Args: []string{"--bad"}}
	slow := Target{Name: "slow", Command: "srv", Args: []string{"--slow"}}
	c := openCache(t, path)
	c.Store(ready, Options{}, Result{Server: "ready", Outcome: Ready, Started: now})
	c.Store(crashed, Options{}, Result{Server: "crashed", Outcome: Exited, Started: now})
	c.Store(slow, Options{}, Result{Server: "slow", Outcome: Timeout, Started: now})
	if err := c.Save(now); err != nil {
		t.Fatal(err)
	}
	c = openCache(t, path)
	cases := []struct {
		target Target
		after  time.Duration
		hit    bool
	}{
		{ready, 14 * time.Minute, true},
		{ready, 15 * time.Minute, false},
		{crashed, 59 * time.Minute, true},
		{crashed, time.Hour, false},
		{slow, 0, false},
	}
	for _, cs := range cases {
		r, hit := c.Lookup(cs.target, Options{}, now.Add(cs.after))
		if hit != cs.hit || (hit && (!r.Cached || r.Server != cs.target.Name)) {
			t.Errorf("Lookup(%s) %s later: got hit=%v %+v, want hit=%v", cs.target.Name, cs.after, hit, r, cs.hit)
		}
	}
}

func TestCacheKeysOnDefinition(t *testing.T) {
	now := time.Now()
	c := openCache(t, filepath.Join(t.TempDir(), "c.json"))
	withToken := Target{Name: "report", Command: "srv", Env: map[string]string{"REPORT_API_TOKEN": "a"}}
	c.Store(withToken, Options{}, Result{Server: "report", Outcome: Ready, Started: now})
	other := withToken
	other.Env = map[string]string{"REPORT_API_TOKEN": "b"}
	if _, hit := c.Lookup(other, Options{}, now); hit {
		t.Errorf("Lookup with another token: got a hit, want a re-probe")
	}
	if _, hit := c.Lookup(withToken, Options{Protocol: mcp.LegacyVersion}, now); hit {
		t.Errorf("Lookup with another forced protocol: got a hit, want a re-probe")
	}
	cn, _ := ParseCanary(`report:x:{}:.`)
	if _, hit := c.Lookup(withToken, Options{Canaries: []Canary{cn}}, now); hit {
		t.Errorf("Lookup with a canary on the server: got a hit, want a re-probe")
	}
	if _, hit := c.Lookup(withToken, Options{}, now); !hit {
		t.Errorf("Lookup of the same definition: got a miss, want a hit")
	}
}

func TestUnreadableCacheIsEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	os.WriteFile(path, []byte(`{"entries": {"x": `), 0o600)
	c := openCache(t, path)
	if len(c.Entries) != 0 || len(c.Fleets) != 0 {
		t.Fatalf("OpenCache of a torn file: got %d entries, want an empty cache", len(c.Entries))
	}
	c.SetReady("fleet", []string{"a", "b"}, time.Now())
	if err := c.Save(time.Now()); err != nil {
		t.Fatalf("Save over a torn cache: %v", err)
	}
	if got, ok := openCache(t, path).LastReady("fleet"); !ok || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("LastReady after Save: got %v %v, want [a b]", got, ok)
	}
}

// TestCacheKeyedByWhatDecides: installing the missing executable, replacing
// it, or changing a variable's value is a new server; a shell's bookkeeping
// variables are not.
func TestCacheKeyedByWhatDecides(t *testing.T) {
	bin := t.TempDir()
	now := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	target := Target{Name: "time", Command: "uvx-test", Args: []string{"mcp-server-time"}}
	opts := Options{Env: []string{"PATH=" + bin, "TOKEN=a", "PWD=/x"}}
	c := openCache(t, filepath.Join(t.TempDir(), "probe.json"))
	c.Store(target, opts, Result{Server: "time", Outcome: Exited, Detail: "not found", Started: now})
	if _, hit := c.Lookup(target, opts, now.Add(time.Minute)); !hit {
		t.Fatal("the same server a minute later: a miss, want a hit")
	}
	if _, hit := c.Lookup(target, Options{Env: []string{"PATH=" + bin, "TOKEN=a", "PWD=/elsewhere"}}, now.Add(time.Minute)); !hit {
		t.Error("another PWD: a miss, want a hit")
	}
	if _, hit := c.Lookup(target, Options{Env: []string{"PATH=" + bin, "TOKEN=b", "PWD=/x"}}, now.Add(time.Minute)); hit {
		t.Error("another TOKEN value: a hit, want a miss")
	}
	exe := installExe(t, bin, "uvx-test")
	if _, hit := c.Lookup(target, opts, now.Add(time.Minute)); hit {
		t.Error("after installing uvx-test: a hit on the cached not-found, want a miss")
	}
	c.Store(target, opts, Result{Server: "time", Outcome: Ready, Started: now})
	if _, hit := c.Lookup(target, opts, now.Add(time.Minute)); !hit {
		t.Error("installed and probed: a miss, want a hit")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(exe, later, later); err != nil {
		t.Fatal(err)
	}
	if _, hit := c.Lookup(target, opts, now.Add(time.Minute)); hit {
		t.Error("after upgrading uvx-test (new mtime): a hit, want a miss")
	}
}

// openCache is OpenCache in a directory the test made: never refused.
func openCache(t *testing.T, path string) *Cache {
	t.Helper()
	c, _, err := OpenCache(path)
	if err != nil {
		t.Fatalf("OpenCache(%s): %v", path, err)
	}
	return c
}

// TestCacheNeverThroughALink: a cache path that is a symlink (planted by
// another user, pointing at a file of theirs or of ours) is neither read nor
// written through.
func TestCacheNeverThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.json")
	os.WriteFile(target, []byte(`{"entries":{},"fleets":{"f":{"ready":["planted"]}}}`), 0o600)
	path := filepath.Join(dir, "probe.json")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if c, _, err := OpenCache(path); c != nil || !errors.Is(err, safefile.ErrUnsafe) {
		t.Fatalf("OpenCache through a symlink: got %v, %v; want nil and a refusal", c, err)
	}
	c := &Cache{path: path, Entries: map[string]cacheEntry{}, Fleets: map[string]fleetState{}}
	if err := c.Save(time.Now()); !errors.Is(err, safefile.ErrUnsafe) {
		t.Errorf("Save over a symlink: got %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "planted") {
		t.Errorf("the link's target was changed: %s", b)
	}
}
