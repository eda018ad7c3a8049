//go:build !windows

package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
	"github.com/mcpshim-dev/mcpshim/internal/truth"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// The truth harness (issue 33): the fault fixture behind the built shim,
// the fault client in front of it, and what the shim says of the run held
// to what package truth computes from the fault spec alone — and, for the
// named scenarios of testdata/truth/oracle.txtar, to what a person wrote.
// A disagreement listed in testdata/truth/pending.txt is a known defect of
// the judge: it is printed, not failed, until the judge is fixed.

const (
	oracleFile  = "testdata/truth/oracle.txtar"
	pendingFile = "testdata/truth/pending.txt"
)

// faultPlay is one fault spec played through the shim.
type faultPlay struct {
	name   string
	sp     testfixtures.FaultSpec
	want   truth.Truth
	got    testfixtures.FaultGot
	stderr string
}

// playFault runs sp's fault fixture behind the built shim, labelled name
// and recording in dir, with the fault client in front.
func playFault(t *testing.T, name string, sp testfixtures.FaultSpec, dir string) *faultPlay {
	t.Helper()
	p := &faultPlay{name: name, sp: sp, want: truth.Of(sp)}
	mark := filepath.Join(t.TempDir(), "mark")
	args := append([]string{"--name", name, "--ledger", dir, "--restart", "never", "--", bins.shim}, sp.Argv()...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bins.shim, args...)
	started := filepath.Join(t.TempDir(), "started")
	cmd.Env = append(verdictEnv(t), "FAULT_MARK="+mark, "FAULT_STARTED="+started)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Errorf("%s: %v", name, err)
		return p
	}
	if sp.Do == testfixtures.FaultOutside {
		go killFromOutside(ctx, mark, sp.Arg)
	}
	// The client starts once the server is spawned, so that its wait is a
	// wait on the server however slow a loaded machine spawns it. It waits
	// its patience for the one answer the truth says never comes, and for
	// the others as long as a loaded machine needs (2 MiB of stderr took
	// the shim over 15 s at load 160).
	if sp.Then == "leave" {
		// It leaves at once, but not before the fixture runs: else the
		// shim stops a server that had no time to fail by itself.
		waitFile(ctx, started, nil)
	} else {
		waitFile(ctx, filepath.Join(dir, name+".jsonl"), []byte(`"spawned"`))
	}
	unanswered, _ := strings.CutSuffix(p.want.Client, ": none")
	patience := func(method string) time.Duration {
		if method == unanswered {
			return truth.Patience
		}
		return time.Minute
	}
	p.got = testfixtures.PlayFaultClient(ctx, sp, testfixtures.NewClient(stdin, stdout), patience)
	stdin.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Errorf("%s: the shim did not end in time (spec %s)", name, sp)
		cmd.Process.Kill()
		<-done
	}
	p.stderr = stderr.String()
	return p
}

// waitFile polls path until it holds want (exists, for nil), or ctx ends.
func waitFile(ctx context.Context, path string, want []byte) {
	for ctx.Err() == nil {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// truthConcurrency is how many fault specs play at once: each is mostly
// waiting (a client's patience, a slow fault), so many more than the cores.
const truthConcurrency = 24

// playAll plays specs at once, truthConcurrency at a time, each named and
// recording where its functions say; plays[i] is specs[i]'s.
func playAll(t *testing.T, specs []testfixtures.FaultSpec, name, dir func(i int) string) []*faultPlay {
	plays := make([]*faultPlay, len(specs))
	sem := make(chan struct{}, truthConcurrency)
	var wg sync.WaitGroup
	for i, sp := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			plays[i] = playFault(t, name(i), sp, dir(i))
		}()
	}
	wg.Wait()
	return plays
}

// killFromOutside waits for the fixture's pid in mark and sends it sig, as
// the OOM killer or a person would.
func killFromOutside(ctx context.Context, mark, sig string) {
	sigs := map[string]syscall.Signal{"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM}
	for ctx.Err() == nil {
		if b, err := os.ReadFile(mark); err == nil && len(b) > 0 {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				syscall.Kill(pid, sigs[sig])
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// adviceKind is the kind of a verdict's advice (truth.Advice*), from the
// words that say what to do. Its phrases are the reviewed part of the
// oracle: a kind is named by what a person is told to do.
func adviceKind(advice string) string {
	has := func(s ...string) bool {
		for _, w := range s {
			if strings.Contains(advice, w) {
				return true
			}
		}
		return false
	}
	switch {
	case advice == "":
		return truth.AdviceNone
	case has("not sent by the shim", "a signal the shim did not send"):
		return truth.AdviceSignal
	case has("closed its stdout"):
		return truth.AdviceClosedOut
	case has("said nothing", "stated no cause", "no cause on its stderr"):
		return truth.AdviceUnstated
	case has("fix what it says"):
		return truth.AdviceFix
	case has("it quit by itself"):
		return truth.AdviceQuit
	case has("align the protocol version"):
		return truth.AdviceProtocol
	case has("why tools/list failed", "not tools/list"):
		return truth.AdviceToolsList
	case has("look at the client"):
		return truth.AdviceClient
	case has("longer client timeout"):
		return truth.AdviceSlow
	case has("then not", "never answered"):
		return truth.AdviceUnanswer
	case has("a stricter client fails on it", "stdout must carry only JSON-RPC"):
		return truth.AdviceWarning
	}
	return "other(" + advice + ")"
}

// observed is what the shim said of a run, in the truth's terms.
func observed(r runVerdict, got testfixtures.FaultGot) truth.Truth {
	o := truth.Truth{Failed: r.Failed, Outcome: r.Outcome, Cause: r.Cause, Advice: adviceKind(r.Advice), Client: got.String()}
	o.Fault = truth.FaultOf(o.Advice)
	if strings.HasPrefix(o.Advice, "other(") {
		o.Fault = "?"
	}
	if got.What == "error" && got.Code == -31000 {
		o.Client = got.Method + ": error -31000"
	}
	for _, a := range r.Answers {
		switch a.Key {
		case "initialized":
			o.Initialized = a.Answer
		case "tools":
			o.Tools = a.Answer
		}
	}
	return o
}

// disagreement says where the shim's words and the client's lot differ from
// the truth, "" when they agree.
func disagreement(p *faultPlay, r runVerdict) string {
	want, got := p.want, observed(r, p.got)
	got.ListAsked = want.ListAsked
	if m, ok := strings.CutSuffix(want.Client, ": "+truth.Gone); ok && (got.Client == m+": error -31000" || got.Client == m+": eof") {
		got.Client = want.Client
	}
	if want.Cause == truth.VersionCause && (got.Cause == "" || strings.Contains(got.Cause, testfixtures.FaultVersionAnswered)) {
		got.Cause = want.Cause
	}
	var why []string
	if got.String() != want.String() {
		why = append(why, fmt.Sprintf("got  %s\nwant %s", got, want))
	}
	if want.Cause == testfixtures.FaultCause && p.got.Code == -31000 && !strings.Contains(p.got.Msg, testfixtures.FaultCause) {
		why = append(why, fmt.Sprintf("the client's error %q lacks the cause the server stated", p.got.Msg))
	}
	for _, a := range r.Answers {
		if a.Key == "tools" && want.ListAsked && strings.Contains(a.Reason, "never asked") {
			why = append(why, fmt.Sprintf("why: tools/list was sent, and it says %q", a.Reason))
		}
	}
	// The shim's last line of its own is its verdict, or its giving up
	// after it, which quotes only a cause the server stated.
	line := lastShimLine(p.stderr, p.name)
	_, said, quotes := strings.Cut(line, "; its stderr said: ")
	switch {
	case r.Outcome == "UNRECORDED":
	case strings.HasPrefix(line, "mcpshim "+p.name+": "+r.Outcome+": "):
	case !strings.HasPrefix(line, "mcpshim "+p.name+": giving up: "):
		why = append(why, fmt.Sprintf("the shim's last line of its own is %q, want its verdict %s or its giving up", line, r.Outcome))
	case quotes && said != want.Cause:
		why = append(why, fmt.Sprintf("the shim's last line %q quotes %q as what its stderr said, want only the stated cause %q", line, said, want.Cause))
	}
	return strings.Join(why, "\n")
}

// lastShimLine is the shim's last line of its own on stderr ("mcpshim
// NAME: ..."), its event lines and the server's aside.
func lastShimLine(stderr, name string) string {
	last := ""
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "mcpshim "+name+": ") {
			last = sc.Text()
		}
	}
	return last
}

// pending reads pending.txt: a scenario or seed name, then the defect.
func pending(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(pendingFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, defect, _ := strings.Cut(line, " ")
		out[name] = strings.TrimSpace(defect)
	}
	return out
}

// judgeAgainstTruth fails t where the shim's words differ from the truth,
// unless pending.txt lists the scenario: then it prints the disagreement.
func judgeAgainstTruth(t *testing.T, p *faultPlay, r runVerdict, known map[string]string) {
	t.Helper()
	d := disagreement(p, r)
	defect, listed := known[p.name]
	switch {
	case d != "" && listed:
		t.Logf("PENDING %s (%s), spec %s:\n%s\n  reason: %s\n  advice: %s", p.name, defect, p.sp, d, r.Reason, r.Advice)
	case d != "":
		t.Errorf("%s: the shim disagrees with the truth (replay: go test ./interop -run 'TestTruth.*/%s$'; spec %s)\n%s\n  reason: %s\n  advice: %s",
			p.name, p.name, p.sp, d, r.Reason, r.Advice)
	case listed:
		t.Logf("NOW TRUE %s: remove it from %s (was %s)", p.name, pendingFile, defect)
	}
}
