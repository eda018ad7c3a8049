package probe

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcpshim-dev/mcpshim/lock"
)

// NewLock builds a lock from a probe of the fleet. It refuses, naming each
// server, when any probe failed or a server offered zero tools (unless
// allowEmpty names it): a failed observation must never become the expectation.
func NewLock(results []Result, allowEmpty []string) (*lock.Lock, []lock.Refusal) {
	l := &lock.Lock{Version: lock.Version, Servers: map[string]map[string]lock.LockedTool{}}
	var refused []lock.Refusal
	for _, r := range results {
		switch {
		case r.Outcome != Ready:
			refused = append(refused, lock.Refusal{Server: r.Server, Reason: fmt.Sprintf("%s: %s", r.Outcome, r.Detail)})
			continue
		case r.CanaryFailed():
			refused = append(refused, lock.Refusal{Server: r.Server, Reason: "its canary failed"})
			continue
		case len(r.Tools) == 0 && !slices.Contains(allowEmpty, r.Server):
			refused = append(refused, lock.Refusal{Server: r.Server, Reason: "READY with zero tools (--allow-empty " + r.Server + " if it really has none)"})
			continue
		}
		tools := map[string]lock.LockedTool{}
		for _, t := range r.Tools {
			tools[t.Name] = lock.LockedTool{Digest: t.Digest, Shape: t.ShapeDigest}
		}
		l.Servers[r.Server] = tools
	}
	return l, refused
}

// Verify checks every locked server of l against a probe of the fleet, in
// the lock's order. Servers the lock does not name are not checked.
func Verify(l *lock.Lock, results []Result) []lock.Drift {
	byName := map[string]*Result{}
	for i := range results {
		byName[results[i].Server] = &results[i]
	}
	names := make([]string, 0, len(l.Servers))
	for name := range l.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var drifts []lock.Drift
	for _, name := range names {
		r, ok := byName[name]
		switch {
		case !ok:
			drifts = append(drifts, lock.Drift{Server: name, Locked: len(l.Servers[name]), Unverified: "not in the probed config"})
		case r.Outcome != Ready:
			drifts = append(drifts, lock.Drift{Server: name, Locked: len(l.Servers[name]), Unverified: string(r.Outcome)})
		default:
			drifts = append(drifts, l.Check(name, r.Tools))
		}
	}
	return drifts
}
