//go:build !windows

package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The README's samples of `mcpshim ledger`, `show` and `why` are the output
// of the verdict table's runs: -update writes them between their markers,
// and otherwise they are compared with a fresh run's, what changes from run
// to run aside. The troubleshooting table's example reasons are reasons the
// verdict table gives for that outcome. So neither can drift (issue 22,
// item 10).

const readmeFile = "../README.md"

// The runs the README shows.
var (
	readmeTable = []string{"healthy", "exit-early-client-left", "eof-exit-0", "stuck-stopped-by-shim", "refused",
		"banner-skipped", "zero-tools", "lock-enforce", "crash-restart-recovers", "node20-crash", "remote-401", "remote-503-paged"}
	readmeShow = "node20-crash"
	readmeWhy  = []string{"stuck-stopped-by-shim", "remote-401"}
)

func checkReadme(t *testing.T, plays map[string]*played, golden map[string]string) {
	for _, name := range append(append(readmeTable, readmeShow), readmeWhy...) {
		if plays[name] == nil {
			t.Skipf("scenario %s did not run", name)
		}
	}
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	samples := readmeSamples(t, plays)
	for _, marker := range []string{"ledger", "show", "why"} {
		cur, ok := between(readme, marker)
		if !ok {
			t.Errorf("README.md lacks the markers <!-- verdict:%s --> and <!-- /verdict:%s -->", marker, marker)
			continue
		}
		if *update {
			open := "<!-- verdict:" + marker + " -->"
			readme = strings.Replace(readme, open+cur, open+samples[marker], 1)
			continue
		}
		got, want := readmeNorm(cur), readmeNorm(samples[marker])
		if marker == "ledger" { // the scenarios ran in parallel: their order varies
			got, want = sortLines(got), sortLines(want)
		}
		if !sameSample(got, want) {
			t.Errorf("README.md's %s sample is not what the verdict table's runs give (go test ./interop -run TestVerdictGolden -update rewrites it)\nREADME:\n%s\nruns:\n%s", marker, got, want)
		}
	}
	if *update {
		if err := os.WriteFile(readmeFile, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkTroubleshooting(t, readme, golden)
}

// readmeSamples are the sample blocks, code fences included.
func readmeSamples(t *testing.T, plays map[string]*played) map[string]string {
	dir := t.TempDir()
	for _, name := range readmeTable {
		b, err := os.ReadFile(filepath.Join(plays[name].dir, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The README shows one path whatever checkout wrote it.
	fence := func(cmd, out string) string {
		return "\n```\n$ " + cmd + "\n" + strings.ReplaceAll(out, wd, readmeInterop) + "```\n"
	}
	show := verdicts(t, plays[readmeShow].dir)[0]
	out := map[string]string{
		"ledger": fence("mcpshim ledger", string(ledgerCLI(t, dir))),
		"show":   fence("mcpshim ledger show "+show.Short, string(ledgerCLI(t, "show", show.ID, plays[readmeShow].dir))),
	}
	for _, name := range readmeWhy {
		out["why"] += fence("mcpshim ledger why --server "+name, string(ledgerCLI(t, "why", "--server", name, plays[name].dir)))
	}
	return out
}

// between is the text between <!-- verdict:NAME --> and <!-- /verdict:NAME -->.
func between(s, name string) (string, bool) {
	open, close := "<!-- verdict:"+name+" -->", "<!-- /verdict:"+name+" -->"
	i, j := strings.Index(s, open), strings.Index(s, close)
	if i < 0 || j < i {
		return "", false
	}
	return s[i+len(open) : j], true
}

var (
	readmeIDRE    = regexp.MustCompile(`\b(?:run_|shim_)?0[0-9A-HJKMNP-TV-Z]{9,25}\b`)
	readmeTimeRE  = regexp.MustCompile(`\b\d{4}-\d\d-\d\d\b|\b\d\d:\d\d:\d\d(?:\.\d+)?\b|\bpgid=\d+|\b(?:UTC|CET|GMT)\b`)
	readmeSpaceRE = regexp.MustCompile(`[ \t]+`)
	readmeMSRE    = regexp.MustCompile(`\b(\w+_ms)=[\d.]+`)
	readmeExitRE  = regexp.MustCompile(`  (?:exit \d+|SIG[A-Z]+) {2,}`)
	// Lines of show that hold what differs from machine to machine: the
	// environment's names, paths, the process's own fields.
	readmeMachineRE = regexp.MustCompile(`(?m)^ +\+\S+ +(?:spawn_requested|spawned|exited)  .*$`)
)

// readmeInterop stands for this directory in the README's samples.
const readmeInterop = "/src/mcpshim/interop"

// readmeNorm takes out of a sample what changes from run to run.
func readmeNorm(s string) string {
	s = strings.ReplaceAll(s, readmeInterop, "<interop>")
	s = readmeMachineRE.ReplaceAllString(s, "<process record>")
	// The table's EXIT column: a server the shim stops may be gone at its
	// stdin's close or at the SIGTERM after it; the verdict is the same.
	s = readmeExitRE.ReplaceAllString(s, "  <exit>  ")
	s = normalize(verdictScenario{}, s)
	s = readmeIDRE.ReplaceAllString(s, "<id>")
	s = readmeTimeRE.ReplaceAllString(s, "<time>")
	s = readmeMSRE.ReplaceAllString(s, "$1=<n>")
	s = strings.ReplaceAll(s, "…", "<cut>")
	return strings.TrimSpace(readmeSpaceRE.ReplaceAllString(s, " "))
}

// sameSample compares two samples line by line; a line cut to the table's
// width (its durations were longer or shorter) need only agree up to the cut.
func sameSample(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		x, xcut := strings.CutSuffix(la[i], "<cut>")
		y, ycut := strings.CutSuffix(lb[i], "<cut>")
		if x == y {
			continue
		}
		if !xcut && !ycut {
			return false
		}
		// Up to the word the shorter cut ends in.
		n := min(len(x), len(y))
		if j := strings.LastIndex(x[:n], " "); j < 0 || x[:j] != y[:j] {
			return false
		}
	}
	return true
}

func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// checkTroubleshooting: each row of the troubleshooting table names an
// outcome and gives a reason, in backticks after "e.g."; the verdict table
// gives that reason for that outcome.
func checkTroubleshooting(t *testing.T, readme string, golden map[string]string) {
	table, ok := between(readme, "troubleshooting")
	if !ok {
		t.Fatal("README.md lacks the markers <!-- verdict:troubleshooting --> and <!-- /verdict:troubleshooting -->")
	}
	reasons := map[string]bool{} // "OUTCOME reason", normalized
	for _, block := range golden {
		outcome := ""
		for _, line := range strings.Split(block, "\n") {
			if o, ok := strings.CutPrefix(line, "run "); ok {
				outcome = strings.Fields(o)[1]
			}
			if r, ok := strings.CutPrefix(line, "  reason: "); ok {
				reasons[outcome+" "+readmeNorm(r)] = true
			}
			if p, ok := strings.CutPrefix(line, "probe: "); ok {
				if o, r, ok := strings.Cut(p, ": "); ok {
					reasons[o+" "+readmeNorm(r)] = true
				}
			}
		}
	}
	exampleRE := regexp.MustCompile("e\\.g\\. `([^`]+)`")
	rows := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		rows++
		outcome := strings.Trim(strings.Fields(cells[1])[0], "`")
		m := exampleRE.FindAllStringSubmatch(row, -1)
		if len(m) == 0 {
			t.Errorf("troubleshooting row %s gives no example reason (e.g. `...`)", outcome)
		}
		for _, ex := range m {
			if !reasons[outcome+" "+readmeNorm(ex[1])] {
				t.Errorf("troubleshooting row %s: the verdict table never gives it the reason %q", outcome, ex[1])
			}
		}
	}
	if rows < 8 {
		t.Errorf("the troubleshooting table has %d rows, want one per outcome", rows)
	}
}
