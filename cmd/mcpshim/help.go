package main

import (
	"flag"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/mcpshim-dev/mcpshim/supervisor"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

const helpText = `mcpshim: see what happened to a stdio MCP server.

Put it in front of the server in your client's config:
  "command": "mcpshim", "args": ["--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]

Commands:
  mcpshim [flags] -- COMMAND [ARG...]   relay and record a server (its flags are below)
  mcpshim ledger [show|why|stats|tail|report|prune] ...   inspect what the ledgers recorded
  mcpshim probe [--config FILE] ...       shake hands with every server of a client config
  mcpshim lock [--out FILE] ...           pin the expected tool surface
  mcpshim wrap | unwrap [--config FILE]   put every stdio server of a config behind mcpshim, or take it out
  mcpshim demo                            a scripted tour against built-in fixture servers
  mcpshim version
`

func runHelp(c *cli, args []string) int {
	fmt.Fprint(c.stdout, helpText)
	fmt.Fprintln(c.stdout, "\nFlags of mcpshim [flags] -- COMMAND:")
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	var f shimFlags
	f.register(fs, c)
	fs.SetOutput(c.stdout)
	fs.PrintDefaults()
	fmt.Fprintln(c.stdout, "\nEach command has -h: mcpshim ledger -h, mcpshim probe -h, ...")
	return 0
}

func runVersion(c *cli) int {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	fmt.Fprintf(c.stdout, "mcpshim %s\n", v)
	return 0
}

// runGuard is the guard process (hidden): it kills a process group when the
// shim that started it dies.
func runGuard(c *cli, args []string) int {
	if len(args) != 1 && len(args) != 2 {
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
	return supervisor.RunGuard(c.stdin, pgid, grace)
}
