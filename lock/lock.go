// Package lock is the tool-surface lock: the file that pins, per server,
// each tool's digests; the comparison of a listed surface with it; and the
// check a session makes of every complete tools/list (warn, or enforce:
// the list answered with an error and the shim's exit status 78).
package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mcpshim-dev/mcpshim/safefile"
)

// ErrMalformed is returned for a lock file that cannot be trusted.
var ErrMalformed = errors.New("malformed lock file")

// Version is the lock file format written and accepted.
const Version = 1

// Lock pins the tool surface an agent is meant to have: per server, each
// tool's digests. It is meant to be read in code review, so it is indented
// and every key sorted.
type Lock struct {
	Version int                              `json:"version"`
	Servers map[string]map[string]LockedTool `json:"servers"`
}

// LockedTool is what the lock remembers of one tool.
type LockedTool struct {
	Digest string `json:"digest"` // Tool.Digest
	Shape  string `json:"shape"`  // Tool.ShapeDigest, to recognise the tool under a new name
}

// Refusal is a server whose probe must not become an expectation.
type Refusal struct {
	Server string
	Reason string
}

// Read reads a lock file. Anything it cannot vouch for (an unknown
// version or member, a digest of an unknown kind) is an error: a lock that
// cannot be read must fail closed, not pass.
func Read(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read lock %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: data after the lock object", ErrMalformed, path)
	}
	if l.Version != Version {
		return nil, fmt.Errorf("%w: %s: version %d, want %d", ErrMalformed, path, l.Version, Version)
	}
	if l.Servers == nil {
		return nil, fmt.Errorf("%w: %s: no servers", ErrMalformed, path)
	}
	for server, tools := range l.Servers {
		for name, t := range tools {
			if !strings.HasPrefix(t.Digest, DigestPrefix) || !strings.HasPrefix(t.Shape, DigestPrefix) {
				return nil, fmt.Errorf("%w: %s: %s/%s: digest is not %s", ErrMalformed, path, server, name, DigestPrefix)
			}
		}
	}
	return &l, nil
}

// Bytes is the lock file's content.
func (l *Lock) Bytes() ([]byte, error) {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode lock: %w", err)
	}
	return append(data, '\n'), nil
}

// Write writes the lock atomically: a reader sees the old file or the new one.
func (l *Lock) Write(path string) error {
	data, err := l.Bytes()
	if err != nil {
		return err
	}
	// Replaced by a rename, never written through a symlink at path.
	if err := safefile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Rename is a locked tool that is missing while a new tool has its exact shape.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Drift is how one locked server's observed surface differs from its lock.
type Drift struct {
	Server  string   `json:"server"`
	Locked  int      `json:"locked"`            // tools the lock names
	Missing []string `json:"missing,omitempty"` // locked, not offered: always a failure
	Changed []string `json:"changed,omitempty"` // offered with another definition
	Extra   []string `json:"extra,omitempty"`   // offered, not locked: passes
	Renamed []Rename `json:"renamed,omitempty"` // probable renames among Missing and Extra
	// Unverified says why the surface was not observed: the probe's outcome,
	// or that the server is no longer configured.
	Unverified string `json:"unverified,omitempty"`
}

// Failed reports whether the drift breaks the lock; a changed definition
// does only when strict.
func (d Drift) Failed(strict bool) bool {
	return d.Unverified != "" || len(d.Missing) > 0 || (strict && len(d.Changed) > 0)
}

// Check compares one server's listed tools with the lock. A server the lock
// does not name has nothing to drift from.
func (l *Lock) Check(server string, tools []Tool) Drift {
	locked := l.Servers[server]
	d := Drift{Server: server, Locked: len(locked)}
	offered := map[string]Tool{}
	for _, t := range tools {
		offered[t.Name] = t
	}
	for name, want := range locked {
		got, ok := offered[name]
		switch {
		case !ok:
			d.Missing = append(d.Missing, name)
		case got.Digest != want.Digest:
			d.Changed = append(d.Changed, name)
		}
	}
	for _, t := range tools {
		if _, ok := locked[t.Name]; !ok {
			d.Extra = append(d.Extra, t.Name)
		}
	}
	sort.Strings(d.Missing)
	sort.Strings(d.Changed)
	sort.Strings(d.Extra)
	taken := map[string]bool{}
	for _, m := range d.Missing {
		for _, e := range d.Extra {
			if !taken[e] && offered[e].ShapeDigest == locked[m].Shape {
				d.Renamed = append(d.Renamed, Rename{From: m, To: e})
				taken[e] = true
				break
			}
		}
	}
	return d
}
