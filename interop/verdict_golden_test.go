//go:build !windows

package interop

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVerdictGolden plays the verdict table: each scenario's runs are judged
// as golden.txtar says (go test ./interop -run TestVerdictGolden -update
// rewrites it), and every view says the same as the judgement.
func TestVerdictGolden(t *testing.T) {
	want, err := readGolden(goldenFile)
	if err != nil && !*update {
		t.Fatal(err)
	}
	lock, base := goldenLock(t), t.TempDir()
	otlp := newOTLPReceiver(t)
	var mu sync.Mutex
	got := map[string]string{}
	plays := map[string]*played{}
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range verdictScenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				needVerdict(t, sc.needs)
				p := play(t, sc, lock, base)
				runs := settled(t, p.dir)
				checkViews(t, p, runs, otlp)
				var probe *runVerdict
				if sc.probe {
					probe = checkProbe(t, p)
				}
				block := golden(p, runs, probe)
				mu.Lock()
				got[sc.name], plays[sc.name] = block, p
				mu.Unlock()
				if !*update && block != want[sc.name] {
					t.Errorf("the verdicts differ from %s (go test ./interop -run TestVerdictGolden -update rewrites it)\ngot:\n%swant:\n%s", goldenFile, block, want[sc.name])
				}
			})
		}
	})
	t.Run("readme", func(t *testing.T) { checkReadme(t, plays, got) })
	if *update && !t.Failed() {
		if err := writeGolden(goldenFile, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(verdictScenarios) < 30 || len(want) != len(verdictScenarios) {
		t.Errorf("the golden table has %d scenarios and the test %d; want the same, at least 30", len(want), len(verdictScenarios))
	}
}

func needVerdict(t *testing.T, what string) {
	switch what {
	case "node22":
		if _, err := node22(); err != nil {
			if testing.Short() {
				t.Skip(err)
			}
			t.Fatal(err)
		}
	case "go":
	default:
		need(t, what)
	}
}

// settled reads dir's verdicts once no run is still going: a SIGKILLed
// shim's server dies with its guard a moment later.
func settled(t *testing.T, dir string) []runVerdict {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for {
		runs := verdicts(t, dir)
		going := false
		for _, r := range runs {
			going = going || r.Outcome == "RUNNING" || r.Outcome == "READY"
		}
		if !going || time.Now().After(deadline) {
			return runs
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// goldenLock writes the lock the lock scenarios break: `mcpshim lock` of
// the report fixture with its token.
func goldenLock(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	entry := map[string]any{"command": bins.shim, "args": []string{"fixture", "report"}, "env": map[string]string{"REPORT_API_TOKEN": "golden"}}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"lock-warn": entry, "lock-enforce": entry}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	cmd := exec.Command(bins.shim, "lock", "--config", cfg, "--out", lock, "--ledger", "off")
	cmd.Env = verdictEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpshim lock: %v\n%s", err, out)
	}
	return lock
}

// The golden file is a txtar archive: a comment, then "-- NAME --" and the
// scenario's block.

func readGolden(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var name string
	var block bytes.Buffer
	flush := func() {
		if name != "" {
			out[name] = block.String()
		}
		block.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if n, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "-- "); ok && strings.HasSuffix(n, " --") {
			flush()
			name = strings.TrimSuffix(n, " --")
			continue
		}
		if name != "" {
			block.WriteString(line)
		}
	}
	flush()
	return out, nil
}

func writeGolden(path string, blocks map[string]string) error {
	var b strings.Builder
	b.WriteString(`The verdict table (issue 22): what mcpshim says of each run of each scenario,
one real process (or HTTP server) behind the built shim and a scripted client.
Written by go test ./interop -run TestVerdictGolden -update; durations, pids,
ports and temporary paths are <dur>, <pid>, <port>, <tmp>. A run marked ! is a
failure. Every view (the ledger's table, why, show, --json, stats, the HTML
report, the OTLP export, the shim's own line, probe) is held to these words.
`)
	names := make([]string, 0, len(blocks))
	for n := range blocks {
		names = append(names, n)
	}
	order := map[string]int{}
	for i, sc := range verdictScenarios {
		order[sc.name] = i
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	for _, n := range names {
		b.WriteString("-- " + n + " --\n" + blocks[n])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
