package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime/debug"

	"github.com/mcpshim-dev/mcpshim/buildinfo"
)

// A release build stamps these at link time (.goreleaser.yaml):
//
//	-ldflags "-X main.version=1.2.3 -X main.commit=<full hash> -X main.date=<commit date, RFC 3339>"
//
// Left empty, they come from the build information the go command embeds.
var (
	version = ""
	commit  = ""
	date    = ""
)

const versionUsage = `usage: mcpshim version [--json]   (also mcpshim --version)

Prints what was built, from where: the version, the commit and its date,
the Go release and the platform. --json prints them as one JSON object.
`

func runVersion(c *cli, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(c, fs, versionUsage, args); code >= 0 {
		return code
	}
	bi, _ := debug.ReadBuildInfo()
	v := buildinfo.Read(buildinfo.Version{Version: version, Commit: commit, Date: date}, bi)
	if !*asJSON {
		fmt.Fprintln(c.stdout, v)
		return 0
	}
	out, _ := json.Marshal(v)
	fmt.Fprintf(c.stdout, "%s\n", out)
	return 0
}
