package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// npmPlatform is the platform package npm installs on this machine (Node
// calls Windows win32).
func npmPlatform(t *testing.T) string {
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	os := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	if os == "" || cpu == "" {
		t.Skipf("no npm platform package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return "@mcpshim/" + os + "-" + cpu
}

// npmInstall lays npm/ out as npm installs it: node_modules/mcpshim with the
// launcher and, unless withoutPlatform, the platform package holding bin.
// It returns the launcher's command line.
func npmInstall(t *testing.T, bin string, withoutPlatform bool) []string {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: the npm launcher is not tested")
	}
	modules := filepath.Join(t.TempDir(), "node_modules")
	copyFile := func(from, to string, mode os.FileMode) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := os.WriteFile(to, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	launcher := filepath.Join(modules, "mcpshim", "bin", "mcpshim.js")
	copyFile("../../npm/mcpshim/package.json", filepath.Join(modules, "mcpshim", "package.json"), 0o644)
	copyFile("../../npm/mcpshim/bin/mcpshim.js", launcher, 0o755)
	if !withoutPlatform {
		pkg := npmPlatform(t)
		copyFile(filepath.Join("../../npm", pkg, "package.json"), filepath.Join(modules, pkg, "package.json"), 0o644)
		copyFile(bin, filepath.Join(modules, pkg, "bin", "mcpshim"+filepath.Ext(bin)), 0o755)
	}
	return []string{node, launcher}
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// exchange runs argv with input on stdin and returns what it wrote on
// stdout and how it ended.
func exchange(t *testing.T, argv []string, input []byte) ([]byte, string, *os.ProcessState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	return stdout.Bytes(), stderr.String(), cmd.ProcessState
}

// TestWrapNotesNpxCache: wrap run from npx's cache says that the path it
// bakes in may vanish; run from anywhere else, it says nothing of the kind.
func TestWrapNotesNpxCache(t *testing.T) {
	bin := builtShim(t)
	home := t.TempDir()
	cached := filepath.Join(home, ".npm", "_npx", "0123456789abcdef", "node_modules", filepath.FromSlash(npmPlatform(t)), "bin", "mcpshim"+filepath.Ext(bin))
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(cached), 0o755)
	if err := os.WriteFile(cached, b, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, ".mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs"]}}}`+"\n"), 0o600)
	for _, tc := range []struct {
		bin  string
		note bool
	}{{cached, true}, {bin, false}} {
		cmd := exec.Command(tc.bin, "wrap", "--dry-run", "--config", config)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		note := strings.Contains(stderr.String(), "is in npx's cache, which npm may clear or move")
		if err != nil || note != tc.note || !strings.Contains(stdout.String(), jsonString(tc.bin)) {
			t.Errorf("%s wrap --dry-run: %v, note %v (want %v), diff with its path %v\nstderr: %s", tc.bin, err, note, tc.note, strings.Contains(stdout.String(), jsonString(tc.bin)), stderr.String())
		}
	}
}
