package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/probe"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// TestMistakesOneLine, through the built binary: a mistyped flag or a bad
// value is one line saying what is wrong, the nearest flag when there is
// one, and where --help is; exit 64, no usage dump.
func TestMistakesOneLine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--nmae", "fs", "--", "true"}, []string{"mcpshim: unknown flag --nmae; did you mean --name?", "mcpshim --help"}},
		{[]string{"--kill-grace", "abc", "--", "true"}, []string{"mcpshim: --kill-grace abc: want a duration such as 2s", "mcpshim --help"}},
		{[]string{"--max-restarts", "many", "--", "true"}, []string{"--max-restarts many: want a whole number"}},
		{[]string{"probe", "--timout", "3s"}, []string{"mcpshim probe: unknown flag --timout; did you mean --timeout?", "mcpshim probe --help"}},
		{[]string{"probe", "--parallel", "lots"}, []string{"--parallel lots: want auto, or 0 to 1024"}},
		{[]string{"ledger", "--outcom", "EXITED", dir}, []string{"mcpshim ledger: unknown flag --outcom; did you mean --outcome?"}},
		{[]string{"ledger", "show", "--jsno", "x"}, []string{"mcpshim ledger show: unknown flag --jsno; did you mean --json?", "mcpshim ledger show --help"}},
		{[]string{"ledger", "export", "--stat", "x"}, []string{"unknown flag --stat; did you mean --state?"}},
		{[]string{"lock", "--ot", "x"}, []string{"unknown flag --ot; did you mean --out?"}},
		{[]string{"wrap", "--dry-rn"}, []string{"mcpshim wrap: unknown flag --dry-rn", "did you mean --dry-run?", "mcpshim wrap --help"}},
		{[]string{"unwrap", "--confg", "x"}, []string{"did you mean --config?"}},
		{[]string{"version", "--jsn"}, []string{"did you mean --json?"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runBuilt(t, dir, []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}, tt.args...)
		ok := code == exitUsage && stdout == "" && strings.Count(stderr, "\n") == 1
		for _, w := range tt.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok || strings.Contains(stderr, "flag provided") || strings.Contains(stderr, "parse error") {
			t.Errorf("mcpshim %q: exit %d, stdout %q, stderr %q; want 64 and one line with %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestOutcomeFilterRefusesUnknown: --outcome BOGUS is a usage error listing
// the outcomes, not "0 runs" and exit 0.
func TestOutcomeFilterRefusesUnknown(t *testing.T) {
	dir := writeFleet(t)
	code, stdout, stderr := runBuilt(t, dir, []string{"HOME=" + dir}, "ledger", "--outcome", "BOGUS", dir)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--outcome BOGUS: no such outcome") ||
		!strings.Contains(stderr, strings.Join(verdict.Outcomes, ", ")) {
		t.Errorf("ledger --outcome BOGUS: exit %d, stdout %q, stderr %q; want 64 and the outcomes listed", code, stdout, stderr)
	}
	code, stdout, _ = runBuilt(t, dir, []string{"HOME=" + dir}, "ledger", "--outcome", "exited,timeout", "--json", dir)
	var doc struct{ Runs []struct{ Outcome string } }
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || len(doc.Runs) == 0 {
		t.Errorf("ledger --outcome exited,timeout: exit %d, %v, %d runs; want 0 and the matching runs", code, err, len(doc.Runs))
	}
	for _, r := range doc.Runs {
		if r.Outcome != verdict.Exited && r.Outcome != verdict.Timeout {
			t.Errorf("ledger --outcome exited,timeout listed a %s run", r.Outcome)
		}
	}
}

// TestHelpFits80Columns: help and every command's help (fixture's too, which
// once exited 64) are on stdout, exit 0, and no line is wider than 80
// columns but the one naming this binary's path.
func TestHelpFits80Columns(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "ledger"}, {"ledger", "--help"}, {"help", "probe"}, {"help", "lock"},
		{"help", "wrap"}, {"help", "unwrap"}, {"help", "demo"}, {"help", "completion"}, {"help", "version"}, {"help", "fixture"},
		{"fixture", "--help"}, {"ledger", "show", "--help"}, {"ledger", "export", "--help"}, {"--name", "x", "--help"}} {
		code, stdout, stderr := runBuilt(t, dir, []string{"HOME=" + dir}, args...)
		if code != 0 || stdout == "" || stderr != "" {
			t.Errorf("mcpshim %q: exit %d, stderr %q; want 0 and the usage on stdout", args, code, stderr)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if len([]rune(line)) > 80 && !strings.Contains(line, builtShim(t)) && !strings.Contains(line, dir) { // paths are not folded
				t.Errorf("mcpshim %q: a line of %d columns: %q", args, len([]rune(line)), line)
			}
		}
	}
	for _, args := range [][]string{{"help", "ledger"}, {"ledger", "show", "--help"}} {
		if _, stdout, _ := runBuilt(t, dir, []string{"HOME=" + dir}, args...); !strings.Contains(stdout, "--wide") {
			t.Errorf("mcpshim %q does not mention --wide:\n%s", args, stdout)
		}
	}
	if _, stdout, _ := runBuilt(t, dir, nil, "help", "fixture"); !strings.Contains(stdout, "usage: mcpshim fixture NAME") || !strings.Contains(stdout, "crash-mid-response") {
		t.Errorf("help fixture:\n%s\nwant the usage and the fixtures", stdout)
	}
}

// TestProbeOneServer: probe --server NAME probes only that server; a name no
// config has is a usage error suggesting the nearest.
func TestProbeOneServer(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"healthy": fixtureEntry(t, "healthy"), "early": fixtureEntry(t, "exit-early"),
		"broken": map[string]any{"command": 7}})
	env := probeEnv(t.TempDir(), "HOME="+dir)
	code, stdout, stderr := runBuilt(t, dir, env, "probe", "--json", "--config", cfg, "--server", "healthy")
	var rep probe.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || len(rep.Results) != 1 || rep.Results[0].Server != "healthy" || len(rep.Problems) != 0 {
		t.Errorf("probe --server healthy: exit %d, %v, %+v\n%s; want 0 and healthy alone (not broken's config problem)", code, err, rep, stderr)
	}
	code, _, stderr = runBuilt(t, dir, env, "probe", "--config", cfg, "--server", "helthy")
	if code != exitUsage || !strings.Contains(stderr, `no server "helthy"`) || !strings.Contains(stderr, "did you mean healthy?") {
		t.Errorf("probe --server helthy: exit %d, stderr %q; want 64 and a suggestion", code, stderr)
	}
}
