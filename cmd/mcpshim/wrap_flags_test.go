package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// runBuilt runs the built mcpshim in dir with env and returns its exit
// status and output.
func runBuilt(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(builtShim(t), args...)
	cmd.Dir, cmd.Env = dir, append(env, testkit.Env()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatalf("mcpshim %q: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

// permutations returns every order of groups.
func permutations(groups [][]string) [][][]string {
	if len(groups) <= 1 {
		return [][][]string{groups}
	}
	var out [][][]string
	for i := range groups {
		rest := append(append([][]string{}, groups[:i]...), groups[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([][]string{groups[i]}, p...))
		}
	}
	return out
}

// TestWrapFlagsAnyOrder: wrap's own flags count wherever they stand, among
// shim flags too; --dry-run and --check never write, and only shim flags are
// baked. Every order of the flags, through the built binary.
func TestWrapFlagsAnyOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	content := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"fs\"]}\n  }\n}\n"
	writeWrapFile(t, file, content, 0o644)
	env := []string{"HOME=" + dir, "PATH=" + systemPath()}

	dryRun := [][]string{{"--config", file}, {"--dry-run"}, {"--json"}, {"--capture", "full"}, {"--restart=never"}}
	for _, p := range permutations(dryRun) {
		args := append([]string{"wrap"}, slicesConcat(p)...)
		code, stdout, stderr := runBuilt(t, dir, env, args...)
		var rep wrapReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
			t.Fatalf("mcpshim %q: exit %d, %v; want 0 and a JSON report\nstdout: %s\nstderr: %s", args, code, err, stdout, stderr)
		}
		if got := readWrapFile(t, file); got != content {
			t.Fatalf("mcpshim %q wrote the file:\n%s", args, got)
		}
		if len(rep.Files) != 1 || rep.Files[0].Written || !rep.DryRun {
			t.Fatalf("mcpshim %q: report %+v, want one file, not written, dry run", args, rep)
		}
		diff := rep.Files[0].Diff
		a, b := `"--capture", "full"`, `"--restart=never"`
		if strings.Index(strings.Join(args, " "), "--capture") > strings.Index(strings.Join(args, " "), "--restart") {
			a, b = b, a
		}
		if !strings.Contains(diff, `"--name", "fs", `+a+", "+b+`, "--", "npx", "-y", "fs"`) {
			t.Errorf("mcpshim %q: diff\n%s\nwant exactly the shim flags baked, in the order given", args, diff)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("dry runs left %v, want only the config", entries)
	}

	check := [][]string{{"--check"}, {"--config", file}, {"--server", "fs"}, {"--json"}}
	for _, p := range permutations(check) {
		args := append([]string{"wrap"}, slicesConcat(p)...)
		code, stdout, _ := runBuilt(t, dir, env, args...)
		if code != 1 || !strings.Contains(stdout, `"result": "not_wrapped"`) || readWrapFile(t, file) != content {
			t.Fatalf("mcpshim %q: exit %d, stdout %s; want 1, fs not wrapped, nothing written", args, code, stdout)
		}
	}

	// A real wrap with the flags in another order bakes the same thing.
	code, _, stderr := runBuilt(t, dir, env, "wrap", "--restart", "never", "--config", file, "--capture", "full")
	if code != 0 || !strings.Contains(readWrapFile(t, file), `"--name", "fs", "--restart", "never", "--capture", "full", "--"`) {
		t.Fatalf("wrap: exit %d, stderr %s, file %s", code, stderr, readWrapFile(t, file))
	}
	if code, stdout, _ := runBuilt(t, dir, env, "wrap", "--config", file, "--check"); code != 0 || !strings.Contains(stdout, "all 1 stdio servers run behind mcpshim") {
		t.Errorf("wrap --check after wrap: exit %d, stdout %q; want 0", code, stdout)
	}
}

func slicesConcat(groups [][]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestBakedFlagsTheShimRefuses: an entry wrapped with a flag the shim
// rejects (the old wrap baked --dry-run) fails wrap --check and probe, which
// look at the mcpshim flags and not only at the command behind them.
func TestBakedFlagsTheShimRefuses(t *testing.T) {
	dir := t.TempDir()
	shim := builtShim(t)
	file := writeMCPConfig(t, dir, map[string]any{
		"good": map[string]any{"command": shim, "args": []string{"--name", "good", "--", shim, "fixture", "healthy"}},
		"bad":  map[string]any{"command": shim, "args": []string{"--name", "bad", "--capture", "full", "--dry-run", "--", shim, "fixture", "healthy"}},
	})
	env := probeEnv(t.TempDir(), "HOME="+dir)

	// The shim itself, as the client would start it.
	if code, _, stderr := runBuilt(t, dir, env, "--name", "bad", "--capture", "full", "--dry-run", "--", shim, "fixture", "healthy"); code != exitUsage || !strings.Contains(stderr, "-dry-run") {
		t.Fatalf("the shim with --dry-run: exit %d, stderr %q; want %d naming the flag", code, stderr, exitUsage)
	}
	code, stdout, _ := runBuilt(t, dir, env, "wrap", "--check", "--config", file)
	if want := file + ": bad: wrapped, but mcpshim refuses its flags: unknown flag --dry-run"; code != 1 || !strings.Contains(stdout, want) || strings.Contains(stdout, "good") {
		t.Errorf("wrap --check: exit %d, stdout %q; want 1 and %q, good not named", code, stdout, want)
	}
	code, stdout, _ = runBuilt(t, dir, env, "probe", "--config", file)
	if code != exitConfig || !strings.Contains(stdout, "bad: runs mcpshim with flags it refuses (unknown flag --dry-run)") ||
		!strings.Contains(stdout, "READY") {
		t.Errorf("probe: exit %d, stdout:\n%s\nwant %d, bad's flags named as a config problem, good READY", code, stdout, exitConfig)
	}
}

// TestWrapOnlyThisProject: in ~/.claude.json, wrap touches the user's
// entries and the current directory's project, not every project's, unless
// --all-projects.
func TestWrapOnlyThisProject(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	claude := filepath.Join(home, ".claude.json")
	writeWrapFile(t, claude, `{"mcpServers": {"user": {"command": "u"}}, "projects": {`+jsonString(project)+`: {"mcpServers": {"here": {"command": "h"}}}, "/elsewhere": {"mcpServers": {"there": {"command": "t"}}}}}`, 0o600)
	env := []string{"HOME=" + home, "PATH=" + systemPath()}
	code, _, stderr := runBuilt(t, project, env, "wrap")
	got := readWrapFile(t, claude)
	if code != 0 || !strings.Contains(got, `"--name", "user", "--", "u"`) || !strings.Contains(got, `"--name", "here", "--", "h"`) ||
		!strings.Contains(got, `"there": {"command": "t"}`) || !strings.Contains(stderr, "1 entry of other projects left alone") {
		t.Fatalf("wrap in %s: exit %d, stderr %s\n%s\nwant user and here wrapped, there left alone and said so", project, code, stderr, got)
	}
	if code, _, _ := runBuilt(t, project, env, "wrap", "--all-projects"); code != 0 || !strings.Contains(readWrapFile(t, claude), `"--name", "there", "--", "t"`) {
		t.Errorf("wrap --all-projects: exit %d, want there wrapped too:\n%s", code, readWrapFile(t, claude))
	}
}

// TestWrapRemoteOAuthFlags: wrap --remote bakes the --oauth-* flags into the
// remote entries only, a secret only as a ${VAR} reference; unwrap restores
// the entry byte for byte.
func TestWrapRemoteOAuthFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	content := "{\n  \"mcpServers\": {\n    \"linear\": {\"type\": \"http\", \"url\": \"https://mcp.linear.app/mcp\"},\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"fs\"]}\n  }\n}\n"
	writeWrapFile(t, file, content, 0o644)
	env := []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--remote", "--oauth-client-id", "abc", "--oauth-client-secret", "literal-secret"}, "a secret written into a config file is a secret on disk"},
		{[]string{"--oauth-client-id", "abc"}, "add --remote"},
		{[]string{"--remote", "--oauth-grant", "password"}, "want authorization_code, client_credentials, jwt-bearer or id-jag"},
	} {
		code, _, errs := runBuilt(t, dir, env, append([]string{"wrap", "--config", file}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) || strings.Contains(errs, "literal-secret") {
			t.Errorf("wrap %q: exit %d %q, want %d and %q (never the secret)", tc.args, code, errs, exitUsage, tc.want)
		}
	}
	code, _, errs := runBuilt(t, dir, env, "wrap", "--config", file, "--remote", "--oauth-client-id", "abc", "--oauth-client-secret", "${LINEAR_SECRET}")
	if code != 0 {
		t.Fatalf("wrap --remote with OAuth flags: exit %d %s", code, errs)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	linear, fs := strings.Join(cfg.MCPServers["linear"].Args, " "), strings.Join(cfg.MCPServers["fs"].Args, " ")
	if !strings.Contains(linear, "--oauth-client-id abc --oauth-client-secret ${LINEAR_SECRET} --url https://mcp.linear.app/mcp") || strings.Contains(fs, "oauth") {
		t.Errorf("wrapped args:\nlinear: %s\nfs: %s\nwant the OAuth flags in the remote entry only", linear, fs)
	}
	if code, _, errs := runBuilt(t, dir, env, "unwrap", "--config", file); code != 0 {
		t.Fatalf("unwrap: exit %d %s", code, errs)
	}
	if got, _ := os.ReadFile(file); string(got) != content {
		t.Errorf("unwrap did not restore the file:\n%s", got)
	}
}
