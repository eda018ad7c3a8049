package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
)

const wrapUsage = `usage: mcpshim wrap [--config FILE]... [--server NAME]... [--dry-run] [--check] [--remote] [--ledger DIR] [SHIM FLAG...]
       mcpshim unwrap [--config FILE]... [--server NAME]... [--dry-run]

wrap puts each stdio server of the client configs behind this mcpshim:
  "command": "/absolute/path/of/mcpshim",
  "args": ["--name", NAME, "--ledger", DIR, SHIM FLAG..., "--", COMMAND, ARGS...]
Only command and args change; the rest of the file is kept byte for byte.
Remote (url) servers and entries already wrapped are left alone. unwrap
restores the original command and args.

Without --config, the files are the ones the clients read for the current
directory and $HOME: .mcp.json, ~/.claude.json, Claude Desktop's config,
.cursor/mcp.json, ~/.cursor/mcp.json, .vscode/mcp.json.

  --config FILE   a config file to rewrite (repeatable)
  --server NAME   only the entry NAME (repeatable; default all stdio entries)
  --dry-run       print the diff and write nothing
  --check         write nothing; exit 1 listing the stdio entries not wrapped
  --remote        also turn Streamable HTTP (type http, url) entries into
                  mcpshim --url entries, headers as --header with their
                  ${VAR} references kept; unwrap restores them byte for byte
  --ledger DIR    bake --ledger DIR (made absolute; or off) into the entries
  SHIM FLAG...    the first other flag and everything after it are baked in
                  as given, e.g. --restart on-failure --handshake-timeout 20s;
                  give them absolute paths: clients start servers from /

The diff goes to stdout before a file is written; a file is replaced
atomically with its permissions kept, and its previous bytes are kept in
FILE.mcpshim.bak. A file that does not parse, or has comments, is refused.
`

var (
	errWrapHelp = errors.New("help requested")
)

// wrapExecutable is the path wrap writes into entries: absolute, because clients
// launch servers with a minimal PATH and / as the working directory. Tests
// replace it.
var wrapExecutable = func() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

type wrapOptions struct {
	configs []string
	servers []string
	dryRun  bool
	check   bool
	baked   []string // the flags written between the entry name and "--"
	ledger  string   // the --ledger directory, absolute, or "off"
	remote  bool     // also bridge Streamable HTTP entries (wrap --remote)
}

// parseWrapArgs reads wrap's own options; the first flag it does not know
// starts the shim flags, which are baked in verbatim (unwrap has none).
func parseWrapArgs(args []string, unwrap bool, cwd string) (wrapOptions, error) {
	var o wrapOptions
	var ledger []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") {
			return o, fmt.Errorf("unexpected argument %q: wrap rewrites config files and takes no command", arg)
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		value := func() (string, error) {
			switch {
			case hasVal && val != "":
				return val, nil
			case hasVal || i+1 >= len(args) || args[i+1] == "":
				return "", fmt.Errorf("%s needs a value", arg)
			}
			i++
			return args[i], nil
		}
		var err error
		switch {
		case name == "h" || name == "help":
			return o, errWrapHelp
		case name == "config":
			var f string
			f, err = value()
			o.configs = append(o.configs, f)
		case name == "server":
			var s string
			s, err = value()
			o.servers = append(o.servers, s)
		case (name == "dry-run" || name == "check") && hasVal:
			err = fmt.Errorf("%s takes no value", arg)
		case name == "dry-run":
			o.dryRun = true
		case name == "remote" && !unwrap && !hasVal:
			o.remote = true
		case name == "check" && !unwrap:
			o.check = true
		case name == "ledger" && !unwrap:
			var dir string
			if dir, err = value(); err == nil {
				if dir != "off" && !filepath.IsAbs(dir) {
					dir = filepath.Join(cwd, dir) // clients start servers from /
				}
				ledger, o.ledger = []string{"--ledger", dir}, dir
			}
		case unwrap:
			err = fmt.Errorf("unknown flag %s", arg)
		default:
			o.baked = append(ledger, args[i:]...)
			return o, nil
		}
		if err != nil {
			return o, err
		}
	}
	o.baked = ledger
	if o.check && o.dryRun {
		return o, errors.New("--check and --dry-run do not go together: --check writes nothing")
	}
	return o, nil
}

// runWrap is `mcpshim wrap` and, with unwrap, `mcpshim unwrap`. Every file is
// read and rewritten in memory first; if any is refused, none is written.
func runWrap(ctx context.Context, c *cli, args []string, unwrap bool) int {
	cmd := "wrap"
	if unwrap {
		cmd = "unwrap"
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.stderr, "mcpshim %s: %s\n", cmd, fmt.Sprintf(format, a...))
		return code
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(exitConfig, "%v", err)
	}
	o, err := parseWrapArgs(args, unwrap, cwd)
	if errors.Is(err, errWrapHelp) {
		fmt.Fprint(c.stdout, wrapUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim %s: %v\n\n%s", cmd, err, wrapUsage)
		return exitUsage
	}
	files := o.configs
	if len(files) == 0 {
		if files = clientconfig.Find(cwd, c.getenv("HOME")); len(files) == 0 {
			return fail(exitConfig, "no client config in %s or $HOME; name one with --config", cwd)
		}
	}
	if o.check {
		return checkWrapped(c, files, o.servers)
	}
	var self string
	if !unwrap {
		if self, err = wrapExecutable(); err != nil {
			return fail(1, "find mcpshim's own path: %v", err)
		}
	}

	type plan struct {
		file, path string // as named, and the file it resolves to
		old, new   []byte
		entries    []clientconfig.Entry
	}
	var plans []plan
	refused := false
	found := map[string]bool{}
	for _, f := range files {
		// Write the file a symlink points at rather than replace the link.
		path, err := filepath.EvalSymlinks(f)
		if err != nil {
			refused = true
			fail(exitConfig, "%v", err)
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			refused = true
			fail(exitConfig, "%v", err)
			continue
		}
		var out []byte
		var entries []clientconfig.Entry
		if unwrap {
			out, entries, err = clientconfig.Unwrap(f, old, o.servers)
		} else {
			out, entries, err = clientconfig.Wrap(f, old, self, o.baked, o.servers)
		}
		if err == nil && (unwrap || o.remote) {
			out, entries, err = remoteRewrite(f, out, entries, self, o, unwrap)
		}
		if err != nil {
			refused = true
			fail(exitConfig, "%v", err)
			continue
		}
		for _, e := range entries {
			found[e.Server] = true
		}
		plans = append(plans, plan{f, path, old, out, entries})
	}
	if refused {
		return fail(exitConfig, "nothing written: fix the files above, or name the others with --config")
	}
	for _, s := range o.servers {
		if !found[s] {
			return fail(exitUsage, "no server %q in %s; nothing written", s, strings.Join(files, ", "))
		}
	}

	// The shim takes a --ledger path that does not exist for one file; wrap's
	// is the directory where each server keeps its NAME.jsonl.
	changes := slices.ContainsFunc(plans, func(p plan) bool { return !bytes.Equal(p.old, p.new) })
	if o.ledger != "" && o.ledger != "off" && !o.dryRun && changes {
		if err := os.MkdirAll(o.ledger, 0o700); err != nil {
			return fail(1, "create the ledger directory: %v", err)
		}
	}
	for _, p := range plans {
		for _, e := range p.entries {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", p.file, wrapLabel(e.Server, e.Project), wrapOutcome(e, unwrap, o.dryRun))
		}
		if bytes.Equal(p.old, p.new) {
			continue
		}
		fmt.Fprint(c.stdout, clientconfig.Diff(p.file, p.old, p.new))
		if o.dryRun {
			continue
		}
		backup, err := clientconfig.Replace(p.path, p.old, p.new)
		if err != nil {
			return fail(1, "write %s: %v", p.file, err)
		}
		fmt.Fprintf(c.stderr, "%s: written; the previous version is in %s\n", p.file, backup)
	}
	return 0
}

// checkWrapped is wrap --check: exit 1 listing the stdio servers that do not
// run behind mcpshim, for CI.
func checkWrapped(c *cli, files, only []string) int {
	servers, _, err := clientconfig.Load(files, c.lookupEnv)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim wrap: %v\n", err)
		return exitConfig
	}
	found := map[string]bool{}
	total, bare := 0, 0
	for _, s := range servers {
		if s.Type != "stdio" || (len(only) > 0 && !slices.Contains(only, s.Name)) {
			continue
		}
		found[s.Name] = true
		total++
		if !s.Wrapped {
			bare++
			fmt.Fprintf(c.stdout, "%s: %s: not wrapped\n", s.File, wrapLabel(s.Name, s.Project))
		}
	}
	for _, s := range only {
		if !found[s] {
			fmt.Fprintf(c.stderr, "mcpshim wrap: no stdio server %q in %s\n", s, strings.Join(files, ", "))
			return exitUsage
		}
	}
	if bare > 0 {
		fmt.Fprintf(c.stderr, "mcpshim wrap --check: %d of %d stdio servers are not behind mcpshim; run mcpshim wrap\n", bare, total)
		return 1
	}
	fmt.Fprintf(c.stdout, "all %d stdio servers run behind mcpshim\n", total)
	return 0
}

func wrapLabel(name, project string) string {
	if project == "" {
		return name
	}
	return fmt.Sprintf("%s (project %s)", name, project)
}

// wrapOutcome says in words what happened, or with dryRun would happen, to e.
func wrapOutcome(e clientconfig.Entry, unwrap, dryRun bool) string {
	switch e.Result {
	case clientconfig.Rewritten:
		verb := "wrap"
		if unwrap {
			verb = "unwrap"
		}
		if dryRun {
			return "to " + verb
		}
		return verb + "ped"
	case clientconfig.Unchanged:
		if unwrap {
			return "not wrapped, left alone"
		}
		return "already wrapped, left alone"
	case clientconfig.SkippedRemote:
		return "skipped: a remote (url) server has no process to wrap"
	}
	return "skipped: " + e.Reason
}
