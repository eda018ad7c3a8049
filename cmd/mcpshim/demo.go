package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/demo"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

const demoUsage = `usage: mcpshim demo [--dir DIR] [--json]

A scripted client talks to built-in fixture servers through mcpshim, one
scenario each, and the demo prints what every ledger recorded. Nothing to
install; the ledgers stay in DIR (default: a new temp dir) for mcpshim ledger.
It exits 1 when a scenario's outcome is not the one the tour expects.

flags:
`

func runDemo(ctx context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	dir := fs.String("dir", "", "keep the ledgers in `DIR` (default: a new temp dir)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if code := parseFlags(c, fs, demoUsage, args); code >= 0 {
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: find own executable: %v\n", err)
		return 1
	}
	if *dir == "" {
		*dir, err = os.MkdirTemp("", "mcpshim-demo-")
	} else {
		_, err = safefile.Dir(*dir)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: ledger dir: %v\n", err)
		return 1
	}
	if abs, err := filepath.Abs(*dir); err == nil {
		*dir = abs
	}

	width := demo.Width
	if cols := terminalWidth(c, c.stdout); cols > 0 && cols < width {
		width = cols
	}
	if !*asJSON {
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("mcpshim demo: %d scenarios, each a scripted client talking to a fixture server through mcpshim", demo.Count()))
	}
	start := time.Now()
	rep, err := demo.Tour(ctx, exe, *dir, c.env)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim demo: %v\n", err)
		return 1
	}
	unexpected := rep.Unexpected()
	if *asJSON {
		if err := printJSON(c.stdout, rep); err != nil {
			fmt.Fprintf(c.stderr, "mcpshim demo: %v\n", err)
			return 1
		}
	} else {
		for _, r := range rep.Scenarios {
			r.Print(c.stdout, width)
		}
		fmt.Fprintln(c.stdout)
		if len(unexpected) == 0 {
			fmt.Fprintf(c.stdout, "%d scenarios in %.1fs, every outcome as expected.\n", demo.Count(), time.Since(start).Seconds())
		} else {
			fmt.Fprintf(c.stdout, "%d scenarios in %.1fs; unexpected outcome: %s\n", demo.Count(), time.Since(start).Seconds(), strings.Join(unexpected, ", "))
		}
		fmt.Fprintln(c.stdout)
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("What the ledgers say, run by run (mcpshim ledger %s):", *dir))
		runLedger(ctx, c, []string{*dir})
		fmt.Fprintln(c.stdout)
		cmdline.Hang(c.stdout, width, "", fmt.Sprintf("The ledgers are in %s; try mcpshim ledger show, why, stats or report --html on them.", *dir))
	}
	if len(unexpected) > 0 {
		return 1
	}
	return 0
}
