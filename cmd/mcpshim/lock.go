package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

const lockUsage = `usage: mcpshim lock [--out FILE] [--allow-empty NAME]... [--config FILE]...
                    [flags]

lock probes every server of the client configs (always afresh, never from
the cache) and writes, per server, each tool's name and a digest of its
definition (sha256/v1: over name, description, inputSchema, outputSchema and
annotations). The file is sorted and indented: review its diff like code.
mcpshim probe --lock FILE then fails (exit 78) when a locked tool is missing.

It refuses to write, naming each server and exiting 78, when any probe failed,
a server has a config problem, or a server offered zero tools: a failed
observation must never become the expectation. --allow-empty NAME accepts a
server that really has no tools.

flags:
`

// lockJSON is lock's --json document.
type lockJSON struct {
	Configs []string     `json:"configs"`
	File    string       `json:"file"`
	Written bool         `json:"written"`
	Servers []lockServer `json:"servers"`
	Refused []lockRefuse `json:"refused"`
	Error   string       `json:"error,omitempty"`
	Exit    int          `json:"exit"`
}

type lockServer struct {
	Server string   `json:"server"`
	Tools  []string `json:"tools"`
}

type lockRefuse struct {
	Server string `json:"server"`
	Reason string `json:"reason"`
}

// runLock is `mcpshim lock`.
func runLock(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("lock", flag.ContinueOnError)
	var pf probeFlags
	pf.register(fs)
	var (
		out        string
		allowEmpty flagList
		asJSON     bool
	)
	fs.StringVar(&out, "out", "mcp-tools.lock.json", "the lock `FILE` to write (- for stdout)")
	fs.Var(&allowEmpty, "allow-empty", "accept zero tools from server `NAME` (repeatable)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON document instead of the text")
	if code := parseFlags(c, fs, lockUsage, args); code >= 0 {
		return code
	}
	rep := lockJSON{File: out, Servers: []lockServer{}, Refused: []lockRefuse{}}
	if out == "-" && asJSON {
		fmt.Fprintln(c.stderr, "mcpshim lock: --out - and --json both write stdout: give --out a file")
		return exitUsage
	}
	text := c.stdout
	if asJSON {
		text = io.Discard
	}
	// done prints the --json document when asked for and returns code.
	done := func(code int) int {
		if asJSON {
			rep.Exit = code
			return c.emitJSON("lock", rep, code)
		}
		return code
	}
	fl, err := probe.LoadFleet(pf.configs, nil, c.getenv, c.lookupEnv, checkShimArgs)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim lock: %s\n", termsafe.String(err.Error()))
		rep.Error = err.Error()
		return done(exitConfig)
	}
	rep.Configs = fl.Files
	opts := probe.Options{Timeout: pf.timeout, Parallel: pf.parallel, Retries: pf.retries, Protocol: pf.protocol, Env: c.env}
	results := fl.Probe(ctx, probe.FleetRun{Options: opts, Ledger: probeLedger(c, pf.ledger), Start: probeStart(c, pf)})
	c = c.safeOutput() // the progress line is done
	if !asJSON {
		text = c.stdout
	}
	if out == "-" { // the lock goes to stdout, what is said about it to stderr
		text = c.stderr
	}

	l, refused := probe.NewLock(results, allowEmpty)
	for _, p := range fl.Problems {
		refused = append(refused, lock.Refusal{Server: p.Server, Reason: "config: " + p.String()})
	}
	info := text // what went well: --quiet leaves it out
	if pf.quiet {
		info = io.Discard
	}
	fmt.Fprintf(info, "read %s\n", strings.Join(fl.Files, ", "))
	if len(results) == 0 && len(refused) == 0 {
		fmt.Fprintf(c.stderr, "mcpshim lock: no servers in %s: nothing to lock\n", strings.Join(fl.Files, ", "))
		rep.Error = "no servers: nothing to lock"
		return done(exitConfig)
	}
	if len(refused) > 0 {
		fmt.Fprintf(text, "refusing to write %s: %s cannot become an expectation\n", out, verdict.Plural(len(refused), "server"))
		for _, r := range refused {
			fmt.Fprintf(text, "  - %s: %s\n", r.Server, r.Reason)
			rep.Refused = append(rep.Refused, lockRefuse{r.Server, r.Reason})
		}
		return done(exitConfig)
	}
	if err := writeLock(c, l, out); err != nil {
		fmt.Fprintf(c.stderr, "mcpshim lock: %v\n", err)
		rep.Error = err.Error()
		return done(exitConfig)
	}
	rep.Written = true
	tools := 0
	for _, r := range results {
		tools += len(r.Tools)
		rep.Servers = append(rep.Servers, lockServer{r.Server, r.ToolNames()})
		if pf.verbose {
			fmt.Fprintf(text, "  %s: %s\n", r.Server, strings.Join(r.ToolNames(), ", "))
		}
	}
	fmt.Fprintf(info, "wrote %s: %s, %s\n", out, verdict.Plural(len(results), "server"), verdict.Plural(tools, "tool"))
	return done(0)
}
