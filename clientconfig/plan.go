package clientconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Plan is one config file's rewrite, made in memory before anything is
// written: wrap and unwrap write no file unless every file can be planned.
type Plan struct {
	File    string // as named
	Path    string // the file it resolves to: a symlink's target is written, not the link
	Old     []byte
	New     []byte
	Entries []Entry
}

// Changed reports whether the rewrite changes the file.
func (p *Plan) Changed() bool { return !bytes.Equal(p.Old, p.New) }

// PlanRewrites reads each file and rewrites it in memory: with unwrap, every
// entry mcpshim wraps is restored; else each stdio entry in scope is wrapped
// (shim and flags put before its command) and, with remoteFlags not nil,
// each Streamable HTTP entry bridged through `shim --url` with those flags.
// Unless dryRun, a file that would change must be writable. A file that
// cannot be planned is an error of its own; the others are planned all the
// same.
func PlanRewrites(files []string, shim string, flags, remoteFlags []string, sc Scope, unwrap, dryRun bool) ([]Plan, []error) {
	var plans []Plan
	var errs []error
	for _, f := range files {
		p, err := planRewrite(f, shim, flags, remoteFlags, sc, unwrap, dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, errs
}

func planRewrite(file, shim string, flags, remoteFlags []string, sc Scope, unwrap, dryRun bool) (Plan, error) {
	path, err := filepath.EvalSymlinks(file)
	if err != nil {
		return Plan{}, err
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, err
	}
	var out []byte
	var entries []Entry
	if unwrap {
		out, entries, err = Unwrap(file, old, sc)
	} else {
		out, entries, err = Wrap(file, old, shim, flags, sc)
	}
	if err == nil && (unwrap || remoteFlags != nil) {
		out, entries, err = RewriteRemote(file, out, entries, shim, remoteFlags, sc, unwrap)
	}
	if err != nil {
		return Plan{}, err
	}
	p := Plan{File: file, Path: path, Old: old, New: out, Entries: entries}
	if !dryRun && p.Changed() {
		if err := Writable(path); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// Wrapped is a stdio server as wrap --check finds it.
type Wrapped struct {
	Server
	Result string // wrapped, not_wrapped, refused_flags
	Reason string // why mcpshim refuses the flags
}

// CheckWrapped is wrap --check: whether each stdio server in scope runs
// behind mcpshim with flags it accepts (checkShimArgs).
func CheckWrapped(servers []Server, sc Scope, checkShimArgs func([]string) error) []Wrapped {
	var out []Wrapped
	for _, s := range servers {
		if s.Type != "stdio" || (len(sc.Servers) > 0 && !slices.Contains(sc.Servers, s.Name)) ||
			(s.Project != "" && sc.Project != "" && !SameProject(s.Project, sc.Project)) {
			continue
		}
		w := Wrapped{Server: s, Result: "wrapped"}
		if !s.Wrapped {
			w.Result = "not_wrapped"
		} else if err := checkShimArgs(s.ShimArgs); err != nil {
			w.Result, w.Reason = "refused_flags", err.Error()
		}
		out = append(out, w)
	}
	return out
}

// resultWords name a Result in wrap's --json; Rewritten is "wrapped" or
// "unwrapped".
var resultWords = map[Result]string{Unchanged: "unchanged", SkippedRemote: "skipped_remote",
	SkippedBroken: "skipped_broken", SkippedProject: "skipped_project"}

// Word names what happened to e in wrap's and unwrap's --json.
func (e Entry) Word(unwrap bool) string {
	if w := resultWords[e.Result]; w != "" {
		return w
	}
	if unwrap {
		return "unwrapped"
	}
	return "wrapped"
}

// Label names a server entry, with its project when it has one.
func Label(name, project string) string {
	if project == "" {
		return name
	}
	return fmt.Sprintf("%s (project %s)", name, project)
}

// Outcome says in words what a wrap (or unwrap) did to e, or with dryRun
// would do.
func (e Entry) Outcome(unwrap, dryRun bool) string {
	switch e.Result {
	case Rewritten:
		verb := "wrap"
		if unwrap {
			verb = "unwrap"
		}
		out := verb + "ped"
		if dryRun {
			out = "to " + verb
		}
		if e.Reason != "" {
			out += " (" + e.Reason + ")"
		}
		return out
	case Unchanged:
		if unwrap {
			return "not wrapped, left alone"
		}
		return "already wrapped, left alone"
	case SkippedRemote:
		return "skipped: a remote (url) server has no process to wrap"
	}
	return "skipped: " + e.Reason
}
