package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestManPage: mcpshim __man, through the built binary, is a man page made
// of the usage texts: every subcommand's usage, every shim flag and the
// environment table; groff reads it without a warning, and what it shows
// spells flags with ASCII hyphens, as they are typed.
func TestManPage(t *testing.T) {
	dir := t.TempDir()
	code, page, stderr := runBuilt(t, dir, []string{"PATH=" + systemPath()}, "__man")
	if code != 0 || !strings.HasPrefix(page, ".TH MCPSHIM 1 ") {
		t.Fatalf("mcpshim __man: exit %d, %.60q\n%s; want a man page", code, page, stderr)
	}
	for _, want := range []string{".SS mcpshim ledger", ".SS mcpshim probe", ".SS mcpshim lock", ".SS mcpshim wrap",
		".SS mcpshim completion", `\-\-kill\-grace`, `\-\-color auto|always|never`, "MCPSHIM_LEDGER", "FORCE_COLOR", ".SH ENVIRONMENT"} {
		if !strings.Contains(page, want) {
			t.Errorf("mcpshim __man lacks %q", want)
		}
	}
	if strings.Contains(page, dir) || strings.Contains(page, "man-home") {
		t.Errorf("mcpshim __man holds this machine's paths, not ~")
	}
	if runtime.GOOS == "windows" {
		return // no man there; the page is made on the release machine
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no groff (apt-get install -y groff-base) to read the man page")
		}
		t.Skip("no groff to read the man page (apt-get install -y groff-base)")
	}
	file := filepath.Join(dir, "mcpshim.1")
	os.WriteFile(file, []byte(page), 0o644)
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", file)
	cmd.Env = []string{"PATH=" + systemPath()}
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil || errb.Len() > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, errb.String())
	}
	shown := string(out)
	if !strings.Contains(shown, "--kill-grace") || strings.Contains(shown, "‐") {
		t.Errorf("the rendered page spells --kill-grace with other than ASCII hyphens:\n%.2000s", shown)
	}
}
