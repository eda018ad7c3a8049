package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestRead(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpshim-dev/mcpshim", Version: "v0.0.0-20261201083000-e13199d3f2a1+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "e13199d3f2a1"}, {Key: "vcs.time", Value: "2026-12-01T08:30:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	module := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpshim-dev/mcpshim", Version: "v1.2.3"}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpshim-dev/mcpshim", Version: "(devel)"}}
	release := Version{Version: "1.2.3", Commit: "abc", Date: "2026-11-30T10:00:00Z"}
	for _, tc := range []struct {
		name    string
		stamped Version
		bi      *debug.BuildInfo
		want    Version
	}{
		{"no build info", Version{}, nil, Version{Version: "(devel)", Source: "unknown"}},
		{"worktree or -buildvcs=false", Version{}, devel, Version{Version: "(devel)", Module: devel.Main.Path, Source: "unknown"}},
		{"checkout", Version{}, checkout, Version{Version: checkout.Main.Version, Commit: "e13199d3f2a1", Date: "2026-12-01T08:30:00Z", Modified: true, Module: checkout.Main.Path, Source: "checkout"}},
		{"go install module@version", Version{}, module, Version{Version: "v1.2.3", Module: module.Main.Path, Source: "module"}},
		{"release stamps win", release, checkout, Version{Version: "1.2.3", Commit: "abc", Date: "2026-11-30T10:00:00Z", Module: checkout.Main.Path, Source: "release"}},
	} {
		got := Read(tc.stamped, tc.bi)
		tc.want.OS, tc.want.Arch, tc.want.Go = runtime.GOOS, runtime.GOARCH, runtime.Version()
		if tc.bi != nil {
			tc.want.Go = tc.bi.GoVersion
		}
		if got != tc.want {
			t.Errorf("%s: Read(%+v, %+v)\n got %+v\nwant %+v", tc.name, tc.stamped, tc.bi, got, tc.want)
		}
	}
}
