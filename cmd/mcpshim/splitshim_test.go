package main

import (
	"slices"
	"testing"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
)

// TestSplitShimAsTheShimParses: clientconfig reads an entry's args as the
// shim's flag set does, so probe, wrap and unwrap find the server behind an
// entry written without "--": for each of the shim's flags, with its value
// when it takes one, the server's command comes where flag.Parse stops; an
// entry running a subcommand has no server behind the shim.
func TestSplitShimAsTheShimParses(t *testing.T) {
	server := []string{"npx", "-y", "srv"}
	for _, name := range shimFlagNames() {
		flags := []string{"--" + name}
		if _, takesValue := shimFlag(name); takesValue {
			flags = append(flags, "v")
		}
		shim, real, ok := clientconfig.SplitShim("/usr/bin/mcpshim", append(slices.Clone(flags), server...))
		if !ok || !slices.Equal(shim, flags) || !slices.Equal(real, server) {
			t.Errorf("SplitShim(mcpshim %q %q) = %q, %q, %v; want %q, %q, true", flags, server, shim, real, ok, flags, server)
		}
	}
	for _, sub := range append(slices.Clone(subcommands), "guard", "__complete", "__man") {
		if shim, real, ok := clientconfig.SplitShim("mcpshim", []string{sub, "x"}); ok {
			t.Errorf("SplitShim(mcpshim %s x) = %q, %q, true; want no server: mcpshim runs its subcommand", sub, shim, real)
		}
	}
}
