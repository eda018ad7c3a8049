package main

import "github.com/mcpshim-dev/mcpshim/termsafe"

// safeOutput is c with stdout and stderr passing through termsafe, for the
// subcommands whose text has no colours or cursor moves of its own (lock,
// wrap): everything they print may name a server, a tool or a file that came
// from outside the shim.
func (c *cli) safeOutput() *cli {
	safe := *c
	safe.stdout, safe.stderr = termsafe.Writer{W: c.stdout}, termsafe.Writer{W: c.stderr}
	return &safe
}
