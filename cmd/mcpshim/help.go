package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/proc"
)

const helpText = `mcpshim: see what happened to a stdio MCP server.

Put it in front of the server in your client's config, by its absolute path
(Claude Desktop starts servers with a minimal PATH; mcpshim wrap does this):
  "command": %q,
  "args": ["--name", "fs", "--", "npx", "-y",
           "@modelcontextprotocol/server-filesystem", "/tmp"]

Commands:
  mcpshim [flags] -- COMMAND [ARG...]
                      relay and record a server (its flags are below)
  mcpshim [flags] --url URL
                      the same for a remote server over Streamable HTTP
  mcpshim ledger [show|why|stats|tail|report|prune|export] ...
                      inspect what the ledgers recorded
  mcpshim probe [--config FILE] ...
                      shake hands with every server of the client configs
  mcpshim lock [--out FILE] ...
                      pin the expected tool surface
  mcpshim auth login|status|logout ...
                      sign in to a remote server ahead of time, list or forget
                      sign-ins
  mcpshim wrap | unwrap [--config FILE] ...
                      put every stdio server of a config behind mcpshim, or
                      take it out
  mcpshim demo        a scripted tour against built-in fixture servers
  mcpshim fixture NAME
                      run one of the fixture servers the demo and tests use
  mcpshim completion bash|zsh|fish|powershell
                      a shell completion script
  mcpshim version [--json]

mcpshim help COMMAND (or mcpshim COMMAND --help) shows a command's usage.
Exit statuses: 64 a usage error, 78 a configuration a person must fix,
75 a failure only time may fix (timeouts), 69 a remote server given up on.
`

// runHelp is `mcpshim help [COMMAND]`: the overview, or COMMAND's own usage
// on stdout.
func runHelp(c *cli, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "ledger", "probe", "lock", "auth", "wrap", "unwrap", "demo", "fixture", "completion", "version":
			// The command prints its usage for --help; here it goes to stdout.
			out := *c
			out.stderr = c.stdout
			return run(context.Background(), append([]string{args[0]}, append(args[1:], "--help")...), c.env, c.stdin, out.stdout, out.stderr)
		case "help":
			fmt.Fprintf(c.stdout, "usage: mcpshim %s\n", args[0])
			return 0
		}
		fmt.Fprintf(c.stderr, "mcpshim help: no command %q%s (the commands are %s)\n", args[0], cmdline.DidYouMean(args[0], subcommands, ""), strings.Join(subcommands, ", "))
		return exitUsage
	}
	self := "/absolute/path/to/mcpshim"
	if p, err := os.Executable(); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			self = p
		}
	}
	fmt.Fprintf(c.stdout, helpText, self)
	fmt.Fprint(c.stdout, "\n"+environment)
	fmt.Fprintln(c.stdout, "\nFlags of mcpshim [flags] -- COMMAND:")
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	var f shimFlags
	f.register(fs, c)
	cmdline.PrintFlags(c.stdout, fs)
	return 0
}

// runGuard is the guard process (hidden): it kills a process group when the
// shim that started it dies.
func runGuard(c *cli, args []string) int {
	ctr, cidfile, args, ok := proc.GuardContainer(args)
	if !ok || len(args) != 1 && len(args) != 2 {
		return exitUsage
	}
	pgid, err := strconv.Atoi(args[0])
	if err != nil {
		return exitUsage
	}
	var grace time.Duration // a package runner's install grace (supervisor/runner.go)
	if len(args) == 2 {
		if grace, err = time.ParseDuration(args[1]); err != nil {
			return exitUsage
		}
	}
	status := proc.RunGuard(c.stdin, pgid, grace)
	if ctr != nil {
		ctr.StopGuarded(cidfile)
	}
	return status
}
