package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

const wrapUsage = `usage: mcpshim wrap [--config FILE]... [--server NAME]... [--dry-run | --check]
                    [--json] [--all-projects] [--remote] [--ledger DIR]
                    [SHIM FLAG...]
       mcpshim unwrap [--config FILE]... [--server NAME]... [--dry-run]
                      [--json] [--all-projects]

wrap puts each stdio server of the client configs behind this mcpshim:
  "command": "/absolute/path/of/mcpshim",
  "args": ["--name", NAME, "--ledger", DIR, SHIM FLAG..., "--",
           COMMAND, ARGS...]
Only command and args change; the rest of the file, comments and trailing
commas included, is kept byte for byte. Remote (url) servers and entries
already wrapped are left alone. unwrap restores the original command and
args, of entries wrapped by hand too (it says so for each).

Without --config, the files are the ones the clients read for the current
directory and $HOME (mcpshim probe lists them). In ~/.claude.json only the
user's entries and the current directory's project are touched, unless
--all-projects.

  --config FILE    a config file to rewrite (repeatable)
  --server NAME    only the entry NAME (repeatable; default all stdio entries)
  --dry-run        print the diff and write nothing
  --check          write nothing; exit 1 listing the stdio entries not wrapped,
                   or wrapped with flags this mcpshim refuses
  --json           one JSON document on stdout instead of the diff
  --all-projects   every project of ~/.claude.json, not only this directory's
  --remote         also turn remote entries (type http, url; type sse with
                   --transport sse) into mcpshim --url entries, headers as
                   --header with their ${VAR} references kept; unwrap
                   restores them byte for byte
  --ledger DIR     bake --ledger DIR (made absolute; or off) into the entries
  --oauth-...      with --remote: bake these into the remote entries only, e.g.
                   --oauth-client-id ID --oauth-client-secret '${SECRET}'
                   (a secret must be a ${VAR} reference)
  SHIM FLAG...     any flag of mcpshim [flags] -- COMMAND (mcpshim -h), e.g.
                   --restart on-failure --handshake-timeout 20s; checked as
                   the shim checks them before anything is written. Paths
                   (--lock) are made absolute: Claude Desktop starts servers
                   from /

wrap's own flags are read wherever they stand. The diff goes to stdout
before a file is written; a file is replaced atomically with its owner,
group and mode kept, and its previous bytes are kept (0600) in
$XDG_STATE_HOME/mcpshim/backups/, never beside it. A file that does not
parse, is read-only, or changes while it is rewritten is refused, and
then nothing more is written.
`

// wrapShimFlags are the shim's own flags, as wrap bakes them.
var wrapShimFlags = clientconfig.ShimFlags{Lookup: shimFlag, Names: shimFlagNames, Check: checkShimArgs, CheckOAuth: checkOAuthArgs}

func parseWrapArgs(args []string, unwrap bool, cwd string) (clientconfig.WrapOptions, error) {
	return clientconfig.ParseWrapArgs(args, unwrap, cwd, wrapShimFlags)
}

// wrapExecutable is the path wrap writes into entries: absolute, because
// Claude Desktop launches servers with a minimal PATH and / as the working
// directory. Tests replace it.
var wrapExecutable = func() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// wrapReport is wrap's and unwrap's --json document.
type wrapReport struct {
	Files  []wrapFile `json:"files"`
	DryRun bool       `json:"dry_run"`
	Errors []string   `json:"errors,omitempty"`
	Exit   int        `json:"exit"`
}

type wrapFile struct {
	File    string      `json:"file"`
	Entries []wrapEntry `json:"entries"`
	Diff    string      `json:"diff,omitempty"`
	Written bool        `json:"written"`
	Backup  string      `json:"backup,omitempty"`
}

// wrapEntry is one entry of a config file: what wrap --check found, or what
// wrap and unwrap did or (--dry-run) would do.
type wrapEntry struct {
	Server  string `json:"server"`
	Project string `json:"project,omitempty"`
	// wrapped, unwrapped, unchanged, skipped_remote, skipped_broken,
	// skipped_project; for --check: wrapped, not_wrapped, refused_flags
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// runWrap is `mcpshim wrap` and, with unwrap, `mcpshim unwrap`. Every file is
// read and rewritten in memory first; if any is refused, none is written.
func runWrap(ctx context.Context, c *cli, args []string, unwrap bool) int {
	c = c.safeOutput()
	cmd := "wrap"
	if unwrap {
		cmd = "unwrap"
	}
	rep := wrapReport{Files: []wrapFile{}}
	var o clientconfig.WrapOptions
	// fail reports an error: on stderr, and in the --json document.
	fail := func(code int, format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(c.stderr, "mcpshim %s: %s\n", cmd, msg)
		rep.Errors = append(rep.Errors, msg)
		rep.Exit = code
		return code
	}
	// done prints the --json document, when asked for, and returns code.
	done := func(code int) int {
		if o.JSON {
			rep.Exit = code
			return c.emitJSON(cmd, rep, code)
		}
		return code
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(exitConfig, "%v", err)
	}
	o, err = parseWrapArgs(args, unwrap, cwd)
	if errors.Is(err, clientconfig.ErrWrapHelp) {
		fmt.Fprint(c.stdout, wrapUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim %s: %v (mcpshim %s --help lists the flags)\n", cmd, err, cmd)
		return exitUsage
	}
	rep.DryRun = o.DryRun
	files := o.Configs
	if len(files) == 0 {
		if files = clientconfig.Find(cwd, c.home(), c.getenv); len(files) == 0 {
			return done(fail(exitConfig, "no client config in %s or $HOME (mcpshim probe -h lists where the clients keep theirs); name one with --config", cwd))
		}
	}
	scope := clientconfig.Scope{Servers: o.Servers, Project: cwd}
	if o.AllProjects {
		scope.Project = ""
	}
	if o.Check {
		return checkWrapped(c, files, scope, o.JSON)
	}
	var self string
	if !unwrap {
		if self, err = wrapExecutable(); err != nil {
			return done(fail(1, "find mcpshim's own path: %v", err))
		}
		if note := clientconfig.NpxCacheNote(self); note != "" {
			fmt.Fprintf(c.stderr, "mcpshim wrap: %s\n", note)
		}
	}

	var remoteFlags []string // nil: remote entries are left alone
	if o.Remote {
		remoteFlags = append(append([]string{}, o.Baked...), o.OAuth...) // not nil, even empty
	}
	plans, errs := clientconfig.PlanRewrites(files, self, o.Baked, remoteFlags, scope, unwrap, o.DryRun)
	for _, err := range errs {
		fail(exitConfig, "%v", err)
	}
	if len(errs) > 0 {
		return done(fail(exitConfig, "nothing written: fix the files above, or name the others with --config"))
	}
	found := map[string]bool{}
	for _, p := range plans {
		for _, e := range p.Entries {
			found[e.Server] = true
		}
	}
	for _, s := range o.Servers {
		if !found[s] {
			return done(fail(exitUsage, "no server %q in %s; nothing written", s, strings.Join(files, ", ")))
		}
	}

	// The shim takes a --ledger path that does not exist for one file; wrap's
	// is the directory where each server keeps its NAME.jsonl.
	changes := slices.ContainsFunc(plans, func(p clientconfig.Plan) bool { return p.Changed() })
	if o.Ledger != "" && o.Ledger != "off" && !o.DryRun && changes {
		if _, err := safefile.Dir(o.Ledger); err != nil {
			return done(fail(1, "create the ledger directory: %v", err))
		}
	}
	for _, p := range plans {
		wf := wrapFile{File: p.File, Entries: []wrapEntry{}}
		otherProjects := 0
		for _, e := range p.Entries {
			if e.Result == clientconfig.SkippedProject {
				otherProjects++
			} else {
				fmt.Fprintf(c.stderr, "%s: %s: %s\n", p.File, clientconfig.Label(e.Server, e.Project), e.Outcome(unwrap, o.DryRun))
			}
			word := e.Word(unwrap)
			wf.Entries = append(wf.Entries, wrapEntry{Server: e.Server, Project: e.Project, Result: word, Reason: e.Reason})
		}
		if otherProjects > 0 {
			entries := "entries"
			if otherProjects == 1 {
				entries = "entry"
			}
			fmt.Fprintf(c.stderr, "%s: %d %s of other projects left alone (run %s in the project, or --all-projects)\n", p.File, otherProjects, entries, cmd)
		}
		rep.Files = append(rep.Files, wf)
		last := &rep.Files[len(rep.Files)-1]
		if !p.Changed() {
			continue
		}
		diff := clientconfig.Diff(p.File, p.Old, p.New)
		if o.JSON {
			last.Diff = diff
		} else {
			fmt.Fprint(c.stdout, diff)
		}
		if o.DryRun {
			continue
		}
		backup := clientconfig.BackupPath(backupDir(c), p.Path, cmd, time.Now())
		if err := clientconfig.Replace(p.Path, p.Old, p.New, backup); err != nil {
			code := 1
			if errors.Is(err, clientconfig.ErrReadOnly) {
				code = exitConfig
			}
			return done(fail(code, "write %s: %v", p.File, err))
		}
		last.Written, last.Backup = true, backup
		fmt.Fprintf(c.stderr, "%s: written; the previous version is in %s\n", p.File, backup)
	}
	return done(0)
}

// backupDir is where wrap and unwrap keep the files they replaced: under
// mcpshim's state directory, never in a project folder that may be shared.
func backupDir(c *cli) string {
	return filepath.Join(ledger.DefaultDir(c.getenv), "backups")
}

// checkWrapped is wrap --check: exit 1 listing the stdio servers that do not
// run behind mcpshim, or run behind it with flags it would refuse, for CI.
func checkWrapped(c *cli, files []string, scope clientconfig.Scope, asJSON bool) int {
	servers, _, err := clientconfig.Load(files, c.lookupEnv)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim wrap: %v\n", err)
		return exitConfig
	}
	type checked struct {
		File string `json:"file"`
		wrapEntry
	}
	rep := struct {
		Servers []checked `json:"servers"`
		Exit    int       `json:"exit"`
	}{Servers: []checked{}}
	found := map[string]bool{}
	total, bad := 0, 0
	for _, w := range clientconfig.CheckWrapped(servers, scope, checkShimArgs) {
		found[w.Name] = true
		total++
		switch w.Result {
		case "not_wrapped":
			fmt.Fprintf(c.stdout, "%s: %s: not wrapped\n", w.File, clientconfig.Label(w.Name, w.Project))
		case "refused_flags":
			fmt.Fprintf(c.stdout, "%s: %s: wrapped, but mcpshim refuses its flags: %s\n", w.File, clientconfig.Label(w.Name, w.Project), w.Reason)
		}
		if w.Result != "wrapped" {
			bad++
		}
		rep.Servers = append(rep.Servers, checked{File: w.File, wrapEntry: wrapEntry{Server: w.Name, Project: w.Project, Result: w.Result, Reason: w.Reason}})
	}
	for _, s := range scope.Servers {
		if !found[s] {
			fmt.Fprintf(c.stderr, "mcpshim wrap: no stdio server %q in %s\n", s, strings.Join(files, ", "))
			return exitUsage
		}
	}
	code := 0
	if bad > 0 {
		fmt.Fprintf(c.stderr, "mcpshim wrap --check: %d of %d stdio servers do not run behind mcpshim as they are; run mcpshim wrap (and unwrap first for refused flags)\n", bad, total)
		code = 1
	} else if !asJSON {
		fmt.Fprintf(c.stdout, "all %d stdio servers run behind mcpshim\n", total)
	}
	if asJSON {
		rep.Exit = code
		return c.emitJSON("wrap --check", rep, code)
	}
	return code
}
