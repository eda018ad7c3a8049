package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
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

// buildVersion is what `mcpshim version --json` prints.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Module   string `json:"module"`
	Modified bool   `json:"modified"` // built from a checkout with uncommitted changes
	// Source says where the values came from: "release" (stamped by the
	// release build), "checkout" (go build or go install in a git checkout),
	// "module" (go install MODULE@VERSION), or "unknown".
	Source string `json:"source"`
}

// readVersion merges the link-time stamps over the embedded build
// information; bi may be nil (a binary built without module support).
func readVersion(stamped buildVersion, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Source: "unknown"}
	if bi != nil {
		v.Module = bi.Main.Path
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
			if v.Version != "(devel)" {
				v.Source = "module"
			}
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit, v.Source = s.Value, "checkout"
			case "vcs.time":
				v.Date = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if stamped.Version != "" {
		v.Version, v.Commit, v.Date, v.Source = stamped.Version, stamped.Commit, stamped.Date, "release"
		v.Modified = false
	}
	return v
}

// String is the one line `mcpshim version` prints.
func (v buildVersion) String() string {
	s := "mcpshim " + v.Version
	if v.Commit != "" {
		s += " (commit " + v.Commit
		if v.Modified {
			s += ", modified"
		}
		if v.Date != "" {
			s += ", " + v.Date
		}
		s += ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, v.Go, v.OS, v.Arch)
}

func runVersion(c *cli, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(c, fs, versionUsage, args); code >= 0 {
		return code
	}
	bi, _ := debug.ReadBuildInfo()
	v := readVersion(buildVersion{Version: version, Commit: commit, Date: date}, bi)
	if !*asJSON {
		fmt.Fprintln(c.stdout, v)
		return 0
	}
	out, _ := json.Marshal(v)
	fmt.Fprintf(c.stdout, "%s\n", out)
	return 0
}
