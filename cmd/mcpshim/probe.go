package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

const probeUsage = `usage: mcpshim probe [--config FILE]... [--lock FILE] [flags]

probe shakes hands with every server of the client configs, as many at once as
the CPUs allow (--parallel), each under one deadline that bounds every read,
and sorts them into outcomes:
  READY           the handshake completed and the tools were listed
  TIMEOUT         no answer before the deadline; retried, since time may fix it
  EXITED          the server died or could not start: the stderr line that
                  states its error, not a runtime's trailer
  CRASHED         the server died after its handshake
  PROTOCOL_ERROR  the server refused the handshake, or wrote no JSON-RPC
  UNREACHABLE     a remote server refused the connection, did not resolve, or
                  answered 5xx; retried
  AUTH_REQUIRED   a remote server answered 401 or 403
The verdict is the one mcpshim ledger gives the probe's run in the server's
ledger: both judge the same records.
Every server gets a line: the failures a person can fix first, with the
reason verbatim, then timeouts and unreachable servers, then the READY ones.
The last line counts them and ends with the exit status. Every probed server
is stopped afterwards, with its whole process group.

Without --config, the files are the ones the clients read for the current
directory and $HOME, and the first line names those found: Claude Code
(.mcp.json, ~/.claude.json), Claude Desktop, Cursor (.cursor/mcp.json,
~/.cursor/mcp.json), VS Code (.vscode/mcp.json, the user mcp.json), Windsurf
(~/.codeium/windsurf/mcp_config.json), Codex (.codex/config.toml,
~/.codex/config.toml or $CODEX_HOME), Gemini CLI (.gemini/settings.json,
~/.gemini/settings.json), Cline, Zed (.zed/settings.json,
~/.config/zed/settings.json). Entries a client has disabled are not probed.

Results are cached under $XDG_CACHE_HOME/mcpshim (READY 15 min, EXITED and
PROTOCOL_ERROR 1 h, TIMEOUT never); --fresh, --lock and a canary re-probe.

A canary calls one tool after listing and checks the text it answers:
  --canary 'SERVER:TOOL:{"json":"args"}:REGEX'
It runs on every probe: name a cheap read-only tool, never one that writes,
bills or sends.

Exit status: 0 all READY (and the lock holds); 78 any EXITED, PROTOCOL_ERROR,
AUTH_REQUIRED, config problem, failed canary, lock violation or shrunken READY
set (--since-last); 75 when the only failures are timeouts or unreachable
servers.

flags:
`

// flagList is a repeatable flag.
type flagList []string

func (l *flagList) String() string     { return strings.Join(*l, " ") }
func (l *flagList) Set(v string) error { *l = append(*l, v); return nil }

// probeFlags are the flags probe and lock share.
type probeFlags struct {
	configs  flagList
	timeout  time.Duration
	parallel int
	retries  int
	protocol string
	verbose  bool
	quiet    bool
	ledger   string
}

func (f *probeFlags) register(fs *flag.FlagSet) {
	f.timeout = 5 * time.Second
	fs.Var(&f.configs, "config", "a client config `FILE` to read (repeatable; default: the clients' own files)")
	fs.Func("timeout", "the deadline for the whole probe of one server: `DURATION` (5s) or seconds (default 5s)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			secs, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				return err
			}
			d = time.Duration(secs * float64(time.Second))
		}
		if d <= 0 {
			return errors.New("must be positive")
		}
		f.timeout = d
		return nil
	})
	f.parallel = probe.Adaptive
	fs.Func("parallel", "servers alive at once: `N`, 0 for all (spawned before any answer is read), or auto (default auto: one per CPU, more while the started ones leave a CPU idle)", func(s string) error {
		if s == "auto" {
			f.parallel = probe.Adaptive
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 1024 {
			return errors.New("want auto, or 0 to 1024")
		}
		f.parallel = n
		return nil
	})
	intFlag(fs, &f.retries, "retries", 1, 0, 100, "further attempts after a TIMEOUT or UNREACHABLE")
	fs.StringVar(&f.protocol, "protocol", "", "force one protocol `VERSION` (2026-07-28, 2025-11-25, ...); default: both eras")
	fs.StringVar(&f.ledger, "ledger", "", "record each probe in the server's ledger in `DIR` (default the shim's ledger directory; off: none)")
	fs.BoolVar(&f.verbose, "v", false, "detail every server: timeouts, tool names, stderr")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line on stderr while the servers are probed")
}

// probeStart shows a progress line on a terminal while a fleet is probed.
func probeStart(c *cli, f probeFlags) func(todo []probe.Target) (func(probe.Result), func()) {
	return func(todo []probe.Target) (func(probe.Result), func()) {
		if f.quiet {
			return nil, nil
		}
		p := newProgress(c, todo)
		if p == nil {
			return nil, nil
		}
		return p.Done, p.Stop
	}
}

// probeLedger is the directory probes are recorded in: --ledger, the
// default directory, or none for "off".
func probeLedger(c *cli, flagValue string) string {
	switch flagValue {
	case "off":
		return ""
	case "":
		return ledger.DefaultDir(c.getenv)
	}
	return flagValue
}

// runProbe is `mcpshim probe`.
func runProbe(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	var pf probeFlags
	pf.register(fs)
	var (
		asJSON, fresh, strict, since bool
		lockFile                     string
		canarySpecs                  flagList
	)
	fs.BoolVar(&asJSON, "json", false, "print one JSON document")
	fs.BoolVar(&fresh, "fresh", false, "ignore cached results")
	fs.StringVar(&lockFile, "lock", "", "verify the tool surface against the lock `FILE` (mcpshim lock writes it)")
	fs.BoolVar(&strict, "strict", false, "with --lock, a changed tool definition fails too")
	fs.BoolVar(&since, "since-last", false, "exit 78 when a server READY at the previous probe of these configs is not READY now")
	fs.Var(&canarySpecs, "canary", "call a read-only tool after listing: `SERVER:TOOL:{json}:REGEX` (repeatable)")
	var only flagList
	fs.Var(&only, "server", "probe only the server `NAME` of the configs (repeatable)")
	if code := parseFlags(c, fs, probeUsage, args); code >= 0 {
		return code
	}
	var canaries []probe.Canary
	for _, spec := range canarySpecs {
		cn, err := probe.ParseCanary(spec)
		if err != nil {
			fmt.Fprintf(c.stderr, "mcpshim probe: %s\n", termsafe.String(err.Error()))
			return exitUsage
		}
		canaries = append(canaries, cn)
	}

	start := time.Now()
	fl, err := probe.LoadFleet(pf.configs, only, c.getenv, c.lookupEnv, checkShimArgs)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim probe: %s\n", termsafe.String(err.Error()))
		if errors.Is(err, probe.ErrNoServer) {
			return exitUsage
		}
		return exitConfig
	}
	var cache *probe.Cache
	if path := probe.DefaultCachePath(c.getenv); path != "" {
		var note string
		var err error
		cache, note, err = probe.OpenCache(path)
		if note != "" {
			fmt.Fprintf(c.stderr, "mcpshim probe: %s\n", termsafe.String(note))
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "mcpshim probe: cache not used: %s\n", termsafe.String(err.Error()))
		}
	}
	opts := probe.Options{Timeout: pf.timeout, Parallel: pf.parallel, Retries: pf.retries,
		Protocol: pf.protocol, Env: c.env, Canaries: canaries}
	// An expectation is checked against what is true now, not a minute ago.
	results := fl.Probe(ctx, probe.FleetRun{Options: opts, Cache: cache, Reuse: !fresh && lockFile == "",
		Ledger: probeLedger(c, pf.ledger), Start: probeStart(c, pf)})

	rep := probe.Report{Configs: fl.Files, Problems: fl.Problems, Notes: fl.Notes, Results: results}
	if lockFile != "" {
		rep.Lock = probe.CheckLock(lockFile, strict, results)
	}
	if cache != nil {
		if sl := cache.Remember(fl.Key(), results, start); since && sl != nil {
			rep.SinceLast = sl
		}
		if err := cache.Save(time.Now()); err != nil {
			fmt.Fprintf(c.stderr, "mcpshim probe: cache not saved: %v\n", err)
		}
	}
	rep.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	rep.Exit = rep.Status()
	if asJSON {
		return c.emitJSON("probe", rep, rep.Exit)
	}
	report.WriteProbe(termsafe.Writer{W: c.stdout}, &rep, pf.verbose, terminalWidth(c, c.stdout))
	return rep.Exit
}
