package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
)

// Fleet is what the client configs say to probe.
type Fleet struct {
	Files    []string
	Targets  []Target
	Problems []ConfigProblem // servers with one are not probed
	Notes    []string        // entries left out: disabled, or shadowed by another of the same name
	Only     []string        // the servers asked for, sorted; none means all
}

// ConfigProblem is a clientconfig.Problem as the JSON report shows it (Msg
// is its Text).
type ConfigProblem struct {
	File   string `json:"file"`
	Server string `json:"server,omitempty"`
	Msg    string `json:"msg"`
}

func (p ConfigProblem) String() string {
	return clientconfig.Problem{File: p.File, Server: p.Server, Msg: p.Msg}.String()
}

// ErrNoServer is a server asked for that no config has.
var ErrNoServer = errors.New("no server")

// LoadFleet reads the configs (or finds the clients' own) and turns each
// usable server entry into a target. Wrapped entries are probed as the real
// server behind mcpshim; checkShimArgs says whether mcpshim accepts the
// flags such an entry gives it. With only, the fleet is those servers, and
// their config problems and notes alone.
func LoadFleet(configs, only []string, getenv func(string) string, lookupEnv func(string) (string, bool), checkShimArgs func([]string) error) (*Fleet, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	files := slices.Clone(configs)
	if len(files) == 0 {
		files = clientconfig.Find(cwd, clientconfig.Home(getenv), getenv)
		if len(files) == 0 {
			return nil, fmt.Errorf("no client config in %s or $HOME (mcpshim probe --help lists where each client keeps its own); name one with --config", cwd)
		}
	}
	servers, problems, err := clientconfig.Load(files, lookupEnv)
	if err != nil {
		return nil, err
	}
	servers, problems = clientconfig.ForProject(servers, problems, cwd)

	for _, s := range servers {
		if s.Wrapped && !s.Disabled {
			// The client starts mcpshim with these flags: one it refuses
			// fails the server however healthy the command behind it is.
			if err := checkShimArgs(s.ShimArgs); err != nil {
				problems = append(problems, clientconfig.Problem{File: s.File, Server: s.Name,
					Msg: fmt.Sprintf("runs mcpshim with flags it refuses (%v): mcpshim unwrap --server %s, then wrap again", err, s.Name)})
			}
		}
	}
	sel := clientconfig.Select(servers, problems)
	if len(only) > 0 {
		if err := keepOnly(&sel, only, files); err != nil {
			return nil, err
		}
	}

	f := &Fleet{Files: files, Problems: []ConfigProblem{}}
	if len(only) > 0 {
		f.Only = slices.Sorted(slices.Values(only))
	}
	for _, n := range sel.Notes {
		if n.Disabled {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s is disabled in its client; not probed", n.File, n.Server))
		} else {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s is shadowed by the entry in %s", n.File, n.Server, n.ShadowedBy))
		}
	}
	for _, p := range sel.Problems {
		f.Problems = append(f.Problems, ConfigProblem{File: p.File, Server: p.Server, Msg: p.Text()})
	}
	for _, s := range sel.Servers {
		t := Target{Name: s.Name, URL: s.URL, Headers: s.Headers}
		if s.Type == "stdio" {
			t = Target{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Cwd}
		}
		f.Targets = append(f.Targets, t)
	}
	return f, nil
}

// keepOnly narrows a selection to the named servers (probe --server).
func keepOnly(sel *clientconfig.Selection, only, files []string) error {
	var known []string
	unread := false // a file that does not parse may hold the server
	for _, s := range sel.Servers {
		known = append(known, s.Name)
	}
	for _, p := range sel.Problems {
		known = append(known, p.Server)
		unread = unread || p.Server == ""
	}
	for _, n := range sel.Notes {
		known = append(known, n.Server)
	}
	for _, name := range only {
		if !slices.Contains(known, name) && !unread {
			slices.Sort(known)
			return fmt.Errorf("%w %q in %s%s (the servers are %s)", ErrNoServer, name, strings.Join(files, ", "),
				cmdline.DidYouMean(name, known, ""), strings.Join(slices.Compact(known), ", "))
		}
	}
	sel.Servers = slices.DeleteFunc(sel.Servers, func(s clientconfig.Server) bool { return !slices.Contains(only, s.Name) })
	sel.Problems = slices.DeleteFunc(sel.Problems, func(p clientconfig.Problem) bool { return p.Server != "" && !slices.Contains(only, p.Server) })
	sel.Notes = slices.DeleteFunc(sel.Notes, func(n clientconfig.Note) bool { return !slices.Contains(only, n.Server) })
	return nil
}

// Key names the fleet's set of config files (and servers asked for), for
// remembering what was ready at the last probe.
func (f *Fleet) Key() string {
	abs := make([]string, len(f.Files))
	for i, file := range f.Files {
		abs[i], _ = filepath.Abs(file)
	}
	sort.Strings(abs)
	if len(f.Only) > 0 { // a part of the fleet is remembered apart
		abs = append(abs, "servers: "+strings.Join(f.Only, ","))
	}
	return strings.Join(abs, "\n")
}

// DefaultCachePath is the probe cache under the XDG cache directory, else on
// Windows %LOCALAPPDATA%\mcpshim\cache, or "" when nothing says where that is.
func DefaultCachePath(getenv func(string) string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" && runtime.GOOS == "windows" && getenv("LOCALAPPDATA") != "" {
		return filepath.Join(getenv("LOCALAPPDATA"), "mcpshim", "cache", "probe.json")
	}
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "mcpshim", "probe.json")
}

// FleetRun says how a fleet is probed.
type FleetRun struct {
	Options        // each probe's
	Cache   *Cache // results are stored in it; nil: none
	Reuse   bool   // answer from Cache where a result is still fresh
	// Ledger is the directory each probed result is recorded in (Record);
	// "" records nothing.
	Ledger string
	// Start, when set, is told which targets are probed before they are; it
	// returns what to call as each ends and when all have (a progress line).
	Start func(todo []Target) (done func(Result), stop func())
}

// Probe probes the fleet and returns a result for every target, in order.
func (f *Fleet) Probe(ctx context.Context, run FleetRun) []Result {
	now := time.Now()
	opts := run.Options
	results := make([]Result, len(f.Targets))
	var todo []Target
	var where []int
	for i, t := range f.Targets {
		if run.Cache != nil && run.Reuse {
			if r, ok := run.Cache.Lookup(t, opts, now); ok {
				results[i] = r
				continue
			}
		}
		todo = append(todo, t)
		where = append(where, i)
	}
	if run.Start != nil {
		done, stop := run.Start(todo)
		if stop != nil {
			opts.OnDone = done
			defer stop()
		}
	}
	shimID := ledger.NewID("probe", now)
	for j, r := range Run(ctx, todo, opts) {
		results[where[j]] = r
		Record(run.Ledger, shimID, r)
		if run.Cache != nil {
			run.Cache.Store(todo[j], opts, r)
		}
	}
	return results
}
