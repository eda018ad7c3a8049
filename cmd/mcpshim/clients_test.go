package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/probe"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryClientsConfig: for each client's fixture, laid out where that
// client keeps its files, probe finds and names the files it read, wrap
// rewrites each in place and unwrap gives back the original bytes, through
// the built binary.
func TestEveryClientsConfig(t *testing.T) {
	for _, client := range []string{"codex", "gemini", "windsurf", "vscode-user", "cline", "zed"} {
		t.Run(client, func(t *testing.T) {
			root := t.TempDir()
			copyTree(t, filepath.Join("..", "..", "clientconfig", "testdata", "clients", client), root)
			home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			// No npx or uvx on this PATH: every stdio server exits at once.
			// On Windows the fixture's .config stands for %APPDATA%.
			env := []string{"HOME=" + home, "USERPROFILE=" + home, "APPDATA=" + filepath.Join(home, ".config"), "PATH=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}
			_, stdout, stderr := runBuilt(t, project, env, "probe", "--json", "--timeout", "10s")
			var rep probe.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("probe --json: %v\n%s\n%s", err, stdout, stderr)
			}
			if len(rep.Configs) == 0 {
				t.Fatalf("probe read no file; stderr %s", stderr)
			}
			originals := map[string]string{}
			for _, f := range rep.Configs {
				if !strings.HasPrefix(f, root) {
					t.Errorf("probe read %s, outside the fixture", f)
				}
				originals[f] = readWrapFile(t, f)
			}
			_, text, _ := runBuilt(t, project, env, "probe", "--timeout", "10s")
			if want := "read " + strings.Join(rep.Configs, ", ") + "\n"; !strings.HasPrefix(text, want) {
				t.Errorf("probe output starts %q, want %q", text, want)
			}

			code, _, stderr := runBuilt(t, project, env, "wrap", "--ledger", filepath.Join(root, "logs"))
			if code != 0 {
				t.Fatalf("wrap: exit %d\n%s", code, stderr)
			}
			for f, orig := range originals {
				if readWrapFile(t, f) == orig && strings.Contains(orig, `command`) {
					t.Errorf("wrap left %s as it was; stderr:\n%s", f, stderr)
				}
			}
			if code, stdout, _ := runBuilt(t, project, env, "wrap", "--check"); code != 0 {
				t.Errorf("wrap --check after wrap: exit %d\n%s", code, stdout)
			}
			if code, _, stderr := runBuilt(t, project, env, "unwrap"); code != 0 {
				t.Fatalf("unwrap: exit %d\n%s", code, stderr)
			}
			for f, orig := range originals {
				if got := readWrapFile(t, f); got != orig {
					t.Errorf("unwrap gave %s\n%s\nwant the original\n%s", f, got, orig)
				}
			}
		})
	}
}
