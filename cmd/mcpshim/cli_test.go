package main

import (
	"encoding/json"
	"fmt"
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

// TestProbeAndDemoFit80Columns, in an 80-column pty: probe's live progress
// line stays within 79 columns (a full line leaves the cursor past the edge
// and the next redraw lands a row below, leaving a stale one), its result
// lines fold at spaces instead of the terminal breaking a word, and the
// demo's lines fit.
func TestProbeAndDemoFit80Columns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet of fixture servers and the demo")
	}
	dir := t.TempDir()
	const path = "/etc/some/really/long/path/to/config.yaml"
	servers := map[string]any{"early": map[string]any{"command": "sh", "args": []string{"-c",
		"echo 'fatal: the configuration file " + path + " could not be read because permission was denied' >&2; exit 1"}}}
	for i := range 12 {
		servers[fmt.Sprintf("a-fairly-long-server-name-%02d", i)] = map[string]any{"command": builtShim(t), "args": []string{"fixture", "slow-init", "--delay", "700ms"}}
	}
	cfg := writeMCPConfig(t, dir, servers)
	out := inPTY(t, 80, "probe", "--fresh", "--config", cfg)
	for _, line := range strings.Split(out, "\n") {
		for i, part := range strings.Split(line, "\r") { // the progress line redraws with \r
			part = strings.ReplaceAll(part, "\x1b[K", "")
			if n := len([]rune(part)); n > 80 || (i > 0 && n > 79) {
				t.Errorf("probe in 80 columns: a line of %d: %q", n, part)
			}
		}
	}
	if !strings.Contains(out, "probing ") || !strings.Contains(out, path) || !strings.Contains(out, "13 servers in") {
		t.Errorf("probe in 80 columns: want the progress line, the path whole on one line, and the summary:\n%s", out)
	}
	demo := inPTY(t, 80, "demo", "--dir", t.TempDir())
	if n, line := longest(demo); n > 80 || !strings.Contains(demo, "every outcome as expected") {
		t.Errorf("demo in 80 columns: a line of %d: %q\n%s", n, line, demo)
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
