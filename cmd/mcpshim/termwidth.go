package main

import (
	"os"
	"strconv"

	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// terminalWidth is the width of the terminal w writes to, or 0 when w is not
// a terminal (a pipe or a file gets every column, uncut). COLUMNS stands in
// when the terminal does not say.
func terminalWidth(c *cli, w any) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, terminal := termsafe.Width(f)
	if !terminal {
		return 0
	}
	if cols > 0 {
		return cols
	}
	if n, err := strconv.Atoi(c.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}
