//go:build !windows

package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/truth"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// oracleScenario is one named scenario of oracle.txtar, as a person wrote it.
type oracleScenario struct {
	name  string
	sp    testfixtures.FaultSpec
	want  string // truth.Truth's words
	probe string // "OUTCOME[ !] advice=KIND", or "" when not probed
}

// readOracle reads the hand-written oracle. It is never written by a test.
func readOracle(t *testing.T) []oracleScenario {
	t.Helper()
	b, err := os.ReadFile(oracleFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []oracleScenario
	for _, block := range strings.Split(string(b), "\n-- ")[1:] {
		head, body, _ := strings.Cut(block, "\n")
		sc := oracleScenario{name: strings.TrimSuffix(head, " --")}
		for _, line := range strings.Split(body, "\n") {
			key, val, _ := strings.Cut(line, ": ")
			switch key {
			case "spec":
				if sc.sp, err = testfixtures.ParseFaultSpec(val); err != nil {
					t.Fatalf("%s: %s: %v", oracleFile, sc.name, err)
				}
			case "want":
				sc.want = val
			case "probe":
				sc.probe = val
			}
		}
		if sc.want == "" {
			t.Fatalf("%s: %s has no want line", oracleFile, sc.name)
		}
		out = append(out, sc)
	}
	return out
}

// TestTruthOracle plays each hand-written scenario through the built shim:
// the truth rules must give what the person wrote, the shim must say it,
// and every view must say the same.
func TestTruthOracle(t *testing.T) {
	scenarios := readOracle(t)
	if len(scenarios) < 40 {
		t.Errorf("%s has %d scenarios, want at least 40", oracleFile, len(scenarios))
	}
	known := pending(t)
	base, otlp := t.TempDir(), newOTLPReceiver(t)
	specs := make([]testfixtures.FaultSpec, len(scenarios))
	for i, sc := range scenarios {
		specs[i] = sc.sp
	}
	plays := playAll(t, specs, func(i int) string { return scenarios[i].name }, func(i int) string { return filepath.Join(base, scenarios[i].name) })
	t.Run("scenarios", func(t *testing.T) {
		for i, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				if got := truth.Of(sc.sp).String(); got != sc.want {
					t.Fatalf("the truth rules disagree with %s for %s (spec %s)\ngot  %s\nwant %s", oracleFile, sc.name, sc.sp, got, sc.want)
				}
				dir := filepath.Join(base, sc.name)
				p := plays[i]
				runs := settled(t, dir)
				if len(runs) != 1 {
					t.Fatalf("%s: %d runs, want 1 (spec %s)", sc.name, len(runs), sc.sp)
				}
				pl := &played{sc: verdictScenario{name: sc.name}, dir: dir, stderr: p.stderr}
				checkViews(t, pl, runs, otlp)
				judgeAgainstTruth(t, p, runs[0], known)
				if sc.probe != "" {
					pl.probeOut = probeServer(t, pl, map[string]any{"command": bins.shim, "args": sc.sp.Argv()})
					r := checkProbe(t, pl)
					got := r.Outcome
					if r.Failed {
						got += " !"
					}
					got += " advice=" + adviceKind(r.Advice)
					probe := &faultPlay{name: sc.name + "/probe"}
					switch defect, listed := known[probe.name]; {
					case got != sc.probe && listed:
						t.Logf("PENDING %s (%s): probe got %s, want %s\n  reason: %s", probe.name, defect, got, sc.probe, r.Reason)
					case got != sc.probe:
						t.Errorf("%s: probe got %s, want %s\n  reason: %s\n  advice: %s", probe.name, got, sc.probe, r.Reason, r.Advice)
					case listed:
						t.Logf("NOW TRUE %s: remove it from %s (was %s)", probe.name, pendingFile, defect)
					}
				}
			})
		}
	})
	t.Run("readme", func(t *testing.T) { checkTroubleshootingTruth(t, scenarios) })
}

// checkTroubleshootingTruth holds the README's troubleshooting table to the
// oracle: each outcome the oracle gives has its row, with the oracle's `!`.
func checkTroubleshootingTruth(t *testing.T, scenarios []oracleScenario) {
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	table, ok := between(string(b), "troubleshooting")
	if !ok {
		t.Fatal("README.md lacks its troubleshooting table")
	}
	rows := map[string]bool{} // outcome -> marked failed
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		head := strings.TrimSpace(cells[1])
		if word, rest, ok := strings.Cut(strings.TrimPrefix(head, "`"), "`"); ok && !strings.Contains(rest, "with") {
			rows[word] = strings.TrimSpace(rest) == "!"
		}
	}
	for _, sc := range scenarios {
		outcome, mark, _ := strings.Cut(sc.want, " ")
		failed, ok := rows[outcome]
		switch {
		case !ok:
			t.Errorf("the oracle's %s is %s, and the README's troubleshooting table has no row for it", sc.name, outcome)
		case failed != strings.HasPrefix(mark, "!"):
			t.Errorf("the oracle's %s is %q; the README's row for %s marks it failed: %v", sc.name, outcome+" "+mark[:1], outcome, failed)
		}
	}
}

// TestTruthCanFail: the harness catches a wrong judge and a wrong truth.
// For each oracle scenario the verdict the truth calls for passes, and each
// of its facts changed fails; a truth with a deliberately wrong rule (a
// server that died before its handshake called CRASHED) disagrees with what
// the person wrote.
func TestTruthCanFail(t *testing.T) {
	advice := map[string]string{
		truth.AdviceNone: "", truth.AdviceFix: "fix what it says", truth.AdviceUnstated: "it said nothing on stderr: run it by hand",
		truth.AdviceQuit: "it quit by itself, status 0", truth.AdviceSignal: "killed by a signal the shim did not send",
		truth.AdviceClosedOut: "it closed its stdout before answering", truth.AdviceSlow: "a slow start needs a longer client timeout",
		truth.AdviceUnanswer: "the server answered its handshake, then not tools/call in time", truth.AdviceProtocol: "align the protocol version",
		truth.AdviceToolsList: "look at the server's stderr for why tools/list failed", truth.AdviceClient: "look at the client",
		truth.AdviceWarning: "fix it: a stricter client fails on it",
	}
	wrongRules := 0
	for _, sc := range readOracle(t) {
		want := truth.Of(sc.sp)
		r := runVerdict{Outcome: want.Outcome, Failed: want.Failed, Cause: want.Cause, Advice: advice[want.Advice]}
		if want.Cause == truth.VersionCause {
			r.Cause = ""
		}
		r.Answers = append(r.Answers, struct{ Key, Question, Answer, Reason string }{Key: "initialized", Answer: want.Initialized},
			struct{ Key, Question, Answer, Reason string }{Key: "tools", Answer: want.Tools})
		got := clientGot(want.Client)
		p := &faultPlay{name: sc.name, sp: sc.sp, want: want, got: got, stderr: "mcpshim " + sc.name + ": " + want.Outcome + ": because\n"}
		if d := disagreement(p, r); d != "" {
			t.Errorf("%s: the verdict the truth calls for disagrees with it:\n%s", sc.name, d)
			continue
		}
		mutants := map[string]func(r *runVerdict, p *faultPlay){
			"failed":  func(r *runVerdict, _ *faultPlay) { r.Failed = !r.Failed },
			"outcome": func(r *runVerdict, _ *faultPlay) { r.Outcome = map[string]string{"ENDED": "READY"}[r.Outcome] },
			"cause":   func(r *runVerdict, _ *faultPlay) { r.Cause = "debug: loaded 3 tools from config" },
			"advice": func(r *runVerdict, _ *faultPlay) {
				r.Advice = map[bool]string{true: "fix what it says", false: "look at the client"}[want.Advice != truth.AdviceFix]
			},
			"answer": func(r *runVerdict, _ *faultPlay) {
				r.Answers[0].Answer = map[string]string{"yes": "no", "no": "yes"}[want.Initialized]
			},
			"client":    func(_ *runVerdict, p *faultPlay) { p.got = testfixtures.FaultGot{What: "eof", Method: "ping"} },
			"last line": func(_ *runVerdict, p *faultPlay) { p.stderr += "mcpshim " + sc.name + ": READY: later\n" },
		}
		for what, mutate := range mutants {
			m, mp := r, *p
			m.Answers = append(m.Answers[:0:0], r.Answers...)
			mutate(&m, &mp)
			if disagreement(&mp, m) == "" {
				t.Errorf("%s: a verdict with its %s changed passes", sc.name, what)
			}
		}
		wrong := want
		if wrong.Outcome == "EXITED" {
			wrong.Outcome = "CRASHED"
			wrongRules++
		}
		if wrong != want && wrong.String() == sc.want {
			t.Errorf("%s: a truth that calls EXITED CRASHED passes the oracle", sc.name)
		}
	}
	if wrongRules == 0 {
		t.Error("no oracle scenario is EXITED: the wrong rule was never tried")
	}
}

// clientGot is the FaultGot whose words are s (truth.Truth.Client).
func clientGot(s string) testfixtures.FaultGot {
	method, what, ok := strings.Cut(s, ": ")
	if !ok {
		return testfixtures.FaultGot{What: s}
	}
	g := testfixtures.FaultGot{Method: method, What: what}
	var code int
	if n, _ := fmt.Sscanf(what, "error %d", &code); n == 1 {
		g.What, g.Code = "error", code
		g.Msg = strings.TrimPrefix(what, fmt.Sprintf("error %d ", code))
		if code == -31000 {
			g.Msg = testfixtures.FaultCause
		}
	}
	return g
}
