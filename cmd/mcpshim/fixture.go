package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// runFixture serves one of the built-in fixture servers on the process's
// stdio: the demo and the tests launch fixtures through it.
func runFixture(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		fixtureUsage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fixtureUsage(c.stdout)
		return 0
	}
	return testfixtures.Serve(args[0], args[1:], c.stdin, c.stdout, c.stderr)
}

// fixtureUsage lists the fixtures, each described in a column folded to 80.
func fixtureUsage(w io.Writer) {
	fmt.Fprint(w, `usage: mcpshim fixture NAME [FLAG...]

Serves one of the built-in fixture servers on stdin and stdout, each failing
at one boundary; the demo and the tests run them as real processes. Put one
behind the shim to see what it records: mcpshim -- mcpshim fixture banner

`)
	const indent = "                        "
	for _, f := range testfixtures.Names() {
		desc := cmdline.Fold(f.Description, cmdline.Width, indent)
		fmt.Fprintf(w, "  %-20s  %s", f.Name, strings.TrimPrefix(desc, indent))
	}
}
