package proc

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseContainerRun: where the shim may add options, and what it reads.
func TestParseContainerRun(t *testing.T) {
	tests := []struct {
		cmd         string
		ok          bool
		engine      string
		run         int
		image       string
		interactive bool
		cidfile     string
	}{
		{"docker run -i --rm img", true, "docker", 1, "img", true, ""},
		{"docker run --rm img", true, "docker", 1, "img", false, ""},
		{"docker --context c container run -it --cidfile /tmp/c img", true, "docker --context c", 4, "img", true, "/tmp/c"},
		{"podman --remote run --interactive=false --cidfile=/x img arg", true, "podman --remote", 2, "img", false, "/x"},
		{"docker run -i --rm", false, "", 0, "", false, ""},
		{"docker ps", false, "", 0, "", false, ""},
		{"docker compose run svc", false, "", 0, "", false, ""},
		{"npx -y run", false, "", 0, "", false, ""},
	}
	for _, tt := range tests {
		r, ok := ParseContainerRun(strings.Fields(tt.cmd))
		got := []any{ok, strings.Join(r.Engine, " "), r.Run, r.Image, r.Interactive, r.CIDFile}
		want := []any{tt.ok, tt.engine, tt.run, tt.image, tt.interactive, tt.cidfile}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ParseContainerRun(%q) = %v, want %v", tt.cmd, got, want)
		}
	}
}

// TestWithCIDFile: the shim's --cidfile goes right after run, before the
// image; a command with its own is left alone.
func TestWithCIDFile(t *testing.T) {
	tests := map[string]string{
		"docker run -i --rm img arg":              "docker run --cidfile /c -i --rm img arg",
		"docker -H x container run -i img":        "docker -H x container run --cidfile /c -i img",
		"podman run -i --cidfile=/mine img":       "podman run -i --cidfile=/mine img",
		"docker.exe run --interactive img --flag": "docker.exe run --cidfile /c --interactive img --flag",
	}
	for cmd, want := range tests {
		argv := strings.Fields(cmd)
		r, _ := ParseContainerRun(argv)
		if got := strings.Join(r.WithCIDFile(argv, "/c"), " "); got != want {
			t.Errorf("WithCIDFile(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestGuardContainer: the guard's container arguments come off before its own.
func TestGuardContainer(t *testing.T) {
	tests := []struct {
		args                  string
		ok                    bool
		engine, cidfile, rest string
	}{
		{"123", true, "", "", "123"},
		{"123 2m0s", true, "", "", "123 2m0s"},
		{"--container /d/cid 3 docker -H x 123", true, "docker -H x", "/d/cid", "123"},
		{"--container /d/cid 1 docker 123 2m0s", true, "docker", "/d/cid", "123 2m0s"},
		{"--container /d/cid 4 docker 123", false, "", "", ""},
		{"--container /d/cid", false, "", "", ""},
		{"--container /d/cid x docker 123", false, "", "", ""},
	}
	for _, tt := range tests {
		r, cidfile, rest, ok := GuardContainer(strings.Fields(tt.args))
		engine := ""
		if r != nil {
			engine = strings.Join(r.Engine, " ")
		}
		got := fmt.Sprint(ok, engine, cidfile, strings.Join(rest, " "))
		if want := fmt.Sprint(tt.ok, tt.engine, tt.cidfile, tt.rest); got != want {
			t.Errorf("GuardContainer(%q) = %s, want %s", tt.args, got, want)
		}
	}
}
