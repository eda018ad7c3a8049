package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/buildinfo"
	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// versionJSON runs bin version --json and decodes it.
func versionJSON(t *testing.T, bin string, args ...string) buildinfo.Version {
	t.Helper()
	out, err := exec.Command(bin, append(args, "--json")...).Output()
	if err != nil {
		t.Fatalf("%s %s --json: %v", bin, strings.Join(args, " "), err)
	}
	var v buildinfo.Version
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s %s --json printed %q: %v", bin, strings.Join(args, " "), out, err)
	}
	var fields map[string]any
	json.Unmarshal(out, &fields)
	for _, k := range []string{"version", "commit", "date", "go", "os", "arch"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("version --json = %s: no %q", out, k)
		}
	}
	return v
}

// TestVersionStamped: the values a release build links in are the ones
// version prints, in both forms and both spellings.
func TestVersionStamped(t *testing.T) {
	ldflags := "-X main.version=1.2.3 -X main.commit=0123456789abcdef -X main.date=2026-11-30T10:00:00Z"
	bin := testkit.Shim(t, "-ldflags", ldflags)
	want := buildinfo.Version{Version: "1.2.3", Commit: "0123456789abcdef", Date: "2026-11-30T10:00:00Z",
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Module: "github.com/mcpshim-dev/mcpshim", Source: "release"}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if got := versionJSON(t, bin, args...); got != want {
			t.Errorf("%s --json\n got %+v\nwant %+v", args[0], got, want)
		}
		out, err := exec.Command(bin, args...).Output()
		line := "mcpshim 1.2.3 (commit 0123456789abcdef, 2026-11-30T10:00:00Z) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
		if err != nil || string(out) != line {
			t.Errorf("%s: got %q (%v), want %q", args[0], out, err, line)
		}
	}
}

// TestVersionFromCheckout: go build in a git checkout stamps the commit and
// its date, which version prints. Go stamps only where .git is a directory
// (not in a git worktree), so the source is copied into a fresh repository.
func TestVersionFromCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	top := strings.TrimSpace(string(root))
	files, err := exec.Command("git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		if !strings.HasSuffix(f, ".go") && f != "go.mod" && f != "go.sum" {
			continue // only what the build reads
		}
		b, err := os.ReadFile(filepath.Join(top, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(repo, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=test", "-c", "user.email=test@localhost"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-11-30T10:00:00Z", "GIT_AUTHOR_DATE=2026-11-30T10:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "snapshot")
	head := git("rev-parse", "HEAD")

	bin := filepath.Join(t.TempDir(), "mcpshim")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/mcpshim")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true in %s: %v\n%s", repo, err, out)
	}
	got := versionJSON(t, bin, "version")
	if got.Commit != head || got.Date != "2026-11-30T10:00:00Z" || got.Source != "checkout" || got.Modified ||
		!strings.HasPrefix(got.Version, "v0.0.0-20261130100000-"+head[:12]) {
		t.Errorf("version --json of a build at commit %s (2026-11-30T10:00:00Z): got %+v", head, got)
	}
}

func TestVersionBadFlag(t *testing.T) {
	bin := builtShim(t)
	cmd := exec.Command(bin, "version", "--jsn")
	out, err := cmd.CombinedOutput()
	if want := "mcpshim version: unknown flag --jsn; did you mean --json? (mcpshim version --help lists the flags)\n"; cmd.ProcessState.ExitCode() != exitUsage || string(out) != want {
		t.Errorf("mcpshim version --jsn: exit %d (%v), output %q; want %d and %q", cmd.ProcessState.ExitCode(), err, out, exitUsage, want)
	}
}
