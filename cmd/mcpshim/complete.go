package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// flagValues are the values of the flags that take one of a few words.
var flagValues = map[string][]string{
	"restart":       {"on-failure", "always", "never"},
	"capture":       {"meta", "full"},
	"log-format":    {"text", "json"},
	"lock-mode":     {"warn", "enforce"},
	"outcome":       verdict.Outcomes,
	"parallel":      {"auto"},
	"protocol":      {mcp.ModernVersion, mcp.LegacyVersion},
	"otlp-protocol": {"http/protobuf"},
	"oauth-grant":   {"authorization_code", "client_credentials", "jwt-bearer", "id-jag"},
}

// pathFlags take a file or directory.
var pathFlags = map[string]bool{"ledger": true, "config": true, "lock": true, "out": true, "html": true, "state": true, "dir": true,
	"oauth-client-key": true, "oauth-assertion-file": true}

// runComplete is `mcpshim __complete WORD... CURRENT` (hidden), what the
// scripts of `mcpshim completion` call on Tab: the candidates for CURRENT
// after the WORDs of an mcpshim command line, one per line, or a directive
// (cmdline.CompleteFiles, cmdline.CompleteCommands). Nothing printed means nothing fits: no
// file names where a flag wants meta or full, or a run id.
func runComplete(c *cli, args []string) int {
	if len(args) == 0 {
		args = []string{""}
	}
	words, cur := args[:len(args)-1], args[len(args)-1]
	for _, w := range completions(c, words, cur) {
		fmt.Fprintln(c.stdout, w)
	}
	return 0
}

func completions(c *cli, words []string, cur string) []string {
	if i := slices.Index(words, "--"); i >= 0 {
		if i == len(words)-1 {
			return []string{cmdline.CompleteCommands} // the server's command
		}
		return []string{cmdline.CompleteFiles} // its arguments
	}
	// bash splits --flag=value at '=' into --flag, =, value.
	if n := len(words); n >= 2 && words[n-1] == "=" {
		return valuesOf(c, strings.TrimLeft(words[n-2], "-"), words)
	}
	if name, _, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(name, "-") {
		var out []string
		for _, v := range valuesOf(c, strings.TrimLeft(name, "-"), words) {
			if v == cmdline.CompleteFiles {
				return []string{cmdline.CompleteFiles}
			}
			out = append(out, name+"="+v)
		}
		return out
	}
	ctx, rest := commandWords(words)
	flags := flagsOf(ctx)
	if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "-") && !strings.Contains(words[n-1], "=") && flags[strings.TrimLeft(words[n-1], "-")] {
		return valuesOf(c, strings.TrimLeft(words[n-1], "-"), words)
	}
	if strings.HasPrefix(cur, "-") {
		var out []string
		for name := range flags {
			out = append(out, cmdline.Dashed(name))
		}
		slices.Sort(out)
		return out
	}
	pos := cmdline.Positionals(rest, flags) // which positional cur is
	switch {
	case len(ctx) == 0 && len(words) > 0:
		return []string{"--"} // the shim's flags are given: the server's command comes next
	case len(ctx) == 0:
		return subcommands
	case ctx[0] == "help" && pos == 0:
		return subcommands
	case ctx[0] == "completion" && pos == 0:
		return cmdline.Shells
	case ctx[0] == "ledger" && len(ctx) == 1 && pos == 0 && !strings.ContainsAny(cur, "/.~"):
		return strings.Fields(ledgerSubcommands) // or a PATH, once it looks like one
	case ctx[0] == "ledger" && len(ctx) == 2 && (ctx[1] == "show" || ctx[1] == "why") && pos == 0:
		return runIDs(c)
	case ctx[0] == "ledger":
		return []string{cmdline.CompleteFiles}
	case ctx[0] == "auth" && len(ctx) == 1 && pos == 0:
		return authSubcommands
	}
	return nil
}

// commandWords is the subcommand words at the start of words (ledger show),
// and the words after them.
func commandWords(words []string) (ctx, rest []string) {
	if len(words) == 0 || strings.HasPrefix(words[0], "-") {
		return nil, words
	}
	if words[0] == "ledger" && len(words) > 1 && slices.Contains(strings.Fields(ledgerSubcommands), words[1]) {
		return words[:2], words[2:]
	}
	if words[0] == "auth" && len(words) > 1 && slices.Contains(authSubcommands, words[1]) {
		return words[:2], words[2:]
	}
	return words[:1], words[1:]
}

// flagsOf is the flags of a command (none for the shim itself), read from
// its own usage, as --help prints it, so it cannot drift: name -> whether it
// takes a value.
func flagsOf(ctx []string) map[string]bool {
	args := append(slices.Clone(ctx), "--help")
	switch {
	case len(ctx) == 0:
		args = []string{"--help"}
	case ctx[0] == "help" || ctx[0] == "completion" || ctx[0] == "fixture":
		return nil
	}
	var out bytes.Buffer
	run(context.Background(), args, nil, strings.NewReader(""), &out, &out)
	flags := cmdline.FlagsOfUsage(out.String())
	if len(ctx) > 0 && ctx[0] == "wrap" { // wrap bakes the shim's flags in
		for name, v := range flagsOf(nil) {
			flags[name] = v
		}
	}
	delete(flags, "h")
	return flags
}

// valuesOf is what may follow the flag name.
func valuesOf(c *cli, name string, words []string) []string {
	switch {
	case pathFlags[name]:
		return []string{cmdline.CompleteFiles}
	case name == "server" && len(words) > 0 && words[0] == "ledger":
		return servers(c)
	}
	return flagValues[name]
}

// runIDs are the short ids of the latest runs in the default ledgers, newest
// first, as `mcpshim ledger` shows them.
func runIDs(c *cli) []string {
	l := &ledgerCmd{c: &cli{env: c.env, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}}
	d, err := l.load(nil, report.ReadOptions{})
	if err != nil || d == nil {
		return nil
	}
	var out []string
	for i := d.runs.Len() - 1; i >= 0 && len(out) < 200; i-- {
		out = append(out, d.short(d.runs.ID(i)))
	}
	return out
}

// rotation is the stamp ledger.RotatedName adds to a full ledger's name,
// compiled on first use: a shim never completes, and it starts sooner.
var rotation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.\d{8}T\d{6}\.\d{3}Z(-\d+)?$`) })

// servers are the names of the servers with a ledger in the default directory.
func servers(c *cli) []string {
	entries, _ := os.ReadDir(ledger.DefaultDir(c.getenv))
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok {
			continue
		}
		name = rotation().ReplaceAllString(name, "")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}
