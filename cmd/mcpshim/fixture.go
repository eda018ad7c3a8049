package main

import (
	"context"
	"fmt"

	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// runFixture serves one of the built-in fixture servers on the process's stdio.
// It is hidden from help: the demo and the tests launch fixtures through it.
func runFixture(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(c.stderr, "usage: mcpshim fixture NAME [ARG...]")
		for _, f := range testfixtures.Names() {
			fmt.Fprintf(c.stderr, "  %-20s %s\n", f.Name, f.Description)
		}
		return exitUsage
	}
	return testfixtures.Serve(args[0], args[1:], c.stdin, c.stdout, c.stderr)
}
