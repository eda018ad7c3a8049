package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

// TTL is how long a result is reused. Outcomes that only a person can change
// last an hour; READY a quarter of an hour; a timeout or an unreachable
// server not at all, since the next minute may differ and a server that was
// slow once must not be treated as absent all day.
func TTL(o Outcome) time.Duration {
	switch o {
	case Ready:
		return 15 * time.Minute
	case Exited, ProtocolError, AuthRequired:
		return time.Hour
	}
	return 0
}

// Cache remembers probe results per server definition, and the READY set of
// each fleet's last probe. The zero Cache is empty; Save writes it atomically.
type Cache struct {
	path    string
	Entries map[string]cacheEntry `json:"entries"` // by fingerprint
	Fleets  map[string]fleetState `json:"fleets"`
}

type cacheEntry struct {
	Until  time.Time `json:"until"`
	Result Result    `json:"result"`
}

type fleetState struct {
	At    time.Time `json:"at"`
	Ready []string  `json:"ready"`
}

// OpenCache reads the cache at path. A missing or unreadable cache is an
// empty one: the cost is a re-probe, never an error. A cache another user
// could have written (a symlink, their file, a directory others can write
// and that cannot be repaired) is not used: err says why, and c is nil.
// note says what was repaired (safefile.Dir).
func OpenCache(path string) (c *Cache, note string, err error) {
	if note, err = safefile.Dir(filepath.Dir(path)); err != nil {
		return nil, note, err
	}
	c = &Cache{}
	data, err := safefile.Read(path)
	if errors.Is(err, safefile.ErrUnsafe) {
		return nil, note, err
	}
	if err != nil || json.Unmarshal(data, c) != nil {
		c = &Cache{} // a half-decoded cache is not trusted either
	}
	c.path = path
	if c.Entries == nil {
		c.Entries = map[string]cacheEntry{}
	}
	if c.Fleets == nil {
		c.Fleets = map[string]fleetState{}
	}
	return c, note, nil
}

// fingerprint identifies what decides a server's outcome: its definition
// (command, args, URL, headers, the forced protocol), the executable its
// command resolves to on its PATH and that file's size and mtime, and the
// environment it would start with, as names and digests of the values. So
// installing a missing tool, upgrading it or changing a variable is a new
// server, and no value is written to the cache file.
func fingerprint(t Target, opts Options) string {
	env := map[string]string{}
	for _, kv := range append(slices.Clone(opts.Env), envList(t.Env)...) {
		if k, v, ok := strings.Cut(kv, "="); ok && !volatileEnv[k] {
			sum := sha256.Sum256([]byte(v))
			env[k] = hex.EncodeToString(sum[:8])
		}
	}
	exe := ""
	if !t.Remote() {
		exe = resolved(t.Command, t.Dir, append(slices.Clone(opts.Env), envList(t.Env)...))
	}
	data, _ := json.Marshal(struct {
		Target     Target
		Protocol   string
		Executable string
		Env        map[string]string
	}{t, opts.Protocol, exe, env}) // maps marshal with sorted keys
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// volatileEnv are variables a shell changes from one prompt to the next,
// which no server's outcome depends on.
var volatileEnv = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true, "COLUMNS": true, "LINES": true,
	"TERM_SESSION_ID": true, "WINDOWID": true, "SSH_AUTH_SOCK": true, "SSH_CONNECTION": true, "SSH_CLIENT": true,
	"SSH_TTY": true, "TMUX_PANE": true, "XDG_SESSION_ID": true, "TERM_PROGRAM_VERSION": true}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// resolved names the file command runs, with its size and mtime, or says it
// is not found, looked up as the spawn does (proc.LookPath) in the
// environment the server starts with: the probe's, then its entry's own.
func resolved(command, dir string, env []string) string {
	p, err := proc.LookPath(command, env, dir)
	if err != nil {
		return "not found"
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return ""
	}
	return fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano())
}

// Lookup returns t's result if one is still within its lifetime. A server
// with a canary is never answered from the cache: the canary's point is now.
func (c *Cache) Lookup(t Target, opts Options, now time.Time) (Result, bool) {
	for _, cn := range opts.Canaries {
		if cn.Server == t.Name {
			return Result{}, false
		}
	}
	e, ok := c.Entries[fingerprint(t, opts)]
	if !ok || !now.Before(e.Until) || e.Result.Server != t.Name {
		return Result{}, false
	}
	e.Result.Cached = true
	return e.Result, true
}

// Store remembers r for as long as its outcome's TTL.
func (c *Cache) Store(t Target, opts Options, r Result) {
	key := fingerprint(t, opts)
	ttl := TTL(r.Outcome)
	if ttl <= 0 || r.CanaryFailed() {
		delete(c.Entries, key)
		return
	}
	r.Cached = false
	c.Entries[key] = cacheEntry{Until: r.Started.Add(ttl), Result: r}
}

// LastReady returns the READY servers of fleet's previous probe.
func (c *Cache) LastReady(fleet string) ([]string, bool) {
	f, ok := c.Fleets[fleet]
	return f.Ready, ok
}

// SetReady records the READY servers of fleet's probe.
func (c *Cache) SetReady(fleet string, ready []string, at time.Time) {
	c.Fleets[fleet] = fleetState{At: at, Ready: ready}
}

// Save drops expired entries and writes the cache atomically.
func (c *Cache) Save(now time.Time) error {
	for k, e := range c.Entries {
		if !now.Before(e.Until) {
			delete(c.Entries, k)
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode cache: %w", err)
	}
	if _, err := safefile.Dir(filepath.Dir(c.path)); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	if err := safefile.Write(c.path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	return nil
}
