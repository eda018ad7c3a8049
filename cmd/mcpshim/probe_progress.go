package main

import (
	"os"

	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/report"
)

// newProgress is the live line of a probe on a terminal's stderr; nil
// elsewhere.
func newProgress(c *cli, todo []probe.Target) *report.Progress {
	f, ok := c.stderr.(*os.File)
	if !ok || len(todo) == 0 || c.getenv("TERM") == "dumb" {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	names := make([]string, 0, len(todo))
	for _, t := range todo {
		names = append(names, t.Name)
	}
	return report.NewProgress(f, terminalWidth(c, f), names)
}
