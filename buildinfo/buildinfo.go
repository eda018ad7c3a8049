// Package buildinfo says what was built, from where: the version, the commit
// and its date, the Go release and the platform, from the values a release
// build stamps at link time or else from the build information the go
// command embeds.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is what a binary knows of its build: what `mcpshim version --json`
// prints.
type Version struct {
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

// Read merges the link-time stamps over the embedded build information; bi
// may be nil (a binary built without module support).
func Read(stamped Version, bi *debug.BuildInfo) Version {
	v := Version{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Source: "unknown"}
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
func (v Version) String() string {
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
