package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// colorFlag is --color auto|always|never (default $MCPSHIM_COLOR, else auto):
// auto colours a terminal unless NO_COLOR is set (no-color.org) or TERM is
// dumb, and colours any output when FORCE_COLOR is set (force-color.org: "when
// present and not an empty string (regardless of its value)"); NO_COLOR wins
// over FORCE_COLOR, and the flag over both.
type colorFlag string

func (f *colorFlag) String() string { return string(*f) }
func (f *colorFlag) Set(v string) error {
	switch v {
	case "auto", "always", "never":
		*f = colorFlag(v)
		return nil
	}
	return fmt.Errorf("want auto, always or never")
}

// register adds --color to fs. A value of MCPSHIM_COLOR that is none of the
// three is auto: a per-machine setting never stops a server from starting.
func (f *colorFlag) register(fs *flag.FlagSet, c *cli) {
	*f = "auto"
	f.Set(c.getenv("MCPSHIM_COLOR"))
	fs.Var(f, "color", "when to colour the text: `auto|always|never` (auto: on a terminal unless NO_COLOR is set, and anywhere when FORCE_COLOR is; env MCPSHIM_COLOR)")
}

// on says whether text written to w is coloured.
func (f colorFlag) on(c *cli, w io.Writer) bool {
	switch f {
	case "always":
		return true
	case "never":
		return false
	}
	if c.getenv("NO_COLOR") == "" && c.getenv("FORCE_COLOR") != "" {
		return true
	}
	return termsafe.ColorOn(c.getenv, w)
}
