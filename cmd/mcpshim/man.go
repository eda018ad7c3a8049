package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
)

// runMan is `mcpshim __man` (hidden): the man page mcpshim.1, in roff, made
// from the same text as `mcpshim help` and each `mcpshim COMMAND --help`, so
// the two never disagree. The release build writes it into the archives and
// packages (scripts/extras.sh).
func runMan(c *cli) int {
	var b strings.Builder
	b.WriteString(".TH MCPSHIM 1 \"\" \"mcpshim\" \"User Commands\"\n")
	b.WriteString(".SH NAME\nmcpshim \\- see what happened to a stdio MCP server\n")
	b.WriteString(".SH SYNOPSIS\n")
	literal(&b, "mcpshim [flags] -- COMMAND [ARG...]\nmcpshim [flags] --url URL\nmcpshim ledger|probe|lock|auth|wrap|unwrap|demo|fixture|completion|help|version ...\n")
	b.WriteString(".SH DESCRIPTION\n")
	literal(&b, fmt.Sprintf(helpText, "/absolute/path/to/mcpshim"))
	b.WriteString(".SH OPTIONS\n")
	var flags bytes.Buffer
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	var f shimFlags
	f.register(fs, &cli{})
	cmdline.PrintFlags(&flags, fs)
	literal(&b, flags.String())
	b.WriteString(".SH COMMANDS\n")
	for _, sub := range subcommands {
		if sub == "help" {
			continue
		}
		var out bytes.Buffer
		// Paths under a home that is the reader's, not the build machine's.
		run(context.Background(), []string{"help", sub}, []string{"HOME=" + manHome}, strings.NewReader(""), &out, &out)
		b.WriteString(".SS mcpshim " + sub + "\n")
		literal(&b, strings.ReplaceAll(out.String(), manHome, "~"))
	}
	b.WriteString(".SH ENVIRONMENT\n")
	literal(&b, strings.TrimPrefix(environment, "Environment "))
	b.WriteString(".SH SEE ALSO\nhttps://github.com/mcpshim-dev/mcpshim\n")
	fmt.Fprint(c.stdout, b.String())
	return 0
}

const manHome = "/mcpshim-man-home"

// literal adds text as a block shown as it is (.nf): the usage texts are laid
// out by hand. Backslashes, and a dot or quote that starts a line, would be
// roff's; "-" is \- so that flags copied from the page are ASCII hyphens.
func literal(b *strings.Builder, text string) {
	b.WriteString(".nf\n")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		line = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(line)
		var esc strings.Builder
		for _, r := range line {
			if r < 0x80 {
				esc.WriteRune(r)
			} else { // roff reads bytes: a rune beyond ASCII by its code point (…, →)
				fmt.Fprintf(&esc, `\[u%04X]`, r)
			}
		}
		line = esc.String()
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(".fi\n")
}
