package probe

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// ready is the deadline of a probe that needs its server to answer: a
// healthy server answers at once, so it costs nothing on a quiet machine,
// and a starved start (the race-built test binary at load ~100) still makes it.
const ready = 60 * time.Second

// Six counterparts (instant, delayed, silent, crash on launch, protocol
// rejection, a missing command), each with its outcome and detail.
func TestSeedCounterparts(t *testing.T) {
	cases := []struct {
		name      string
		target    Target
		timeout   time.Duration
		slow      bool
		outcome   Outcome
		detail    string // a substring
		lastEvent string
	}{
		{"instant", fixture("healthy"), ready, false, Ready, "healthy 1.0.0", ""},
		{"3s delay, 5s deadline", edgeTarget("slow-start"), 5 * time.Second, true, Ready, "slow-start 0.1", ""},
		{"3s delay, 2s deadline", edgeTarget("slow-start"), 2 * time.Second, true, Timeout, "no answer to initialize within 2s (initialize_received_no_response)", InitializeReceivedNoResponse},
		{"silent", fixture("silent"), 5 * time.Second, true, Timeout, "no answer to initialize within 5s (initialize_received_no_response)", InitializeReceivedNoResponse},
		{"crash on launch", fixture("exit-early"), ready, false, Exited, "fatal: missing API key", ""},
		{"protocol rejection", fixture("protocol-reject"), ready, false, ProtocolError, "unsupported protocolVersion", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("waits out a real deadline")
			}
			t.Parallel()
			r := probeOne(t, c.target, c.timeout)
			if r.Outcome != c.outcome || !strings.Contains(r.Detail, c.detail) || r.LastEvent != c.lastEvent {
				t.Fatalf("probe %v with a %s deadline: got %s %q (last event %q), want %s containing %q (last event %q)",
					c.target.Args, c.timeout, r.Outcome, r.Detail, r.LastEvent, c.outcome, c.detail, c.lastEvent)
			}
			if c.outcome == Timeout && (r.Elapsed < c.timeout || r.Elapsed > c.timeout+2*time.Second) {
				t.Errorf("probe %v: gave up after %s, want at its %s deadline", c.target.Args, r.Elapsed, c.timeout)
			}
		})
	}
}

func TestCrashReportsExitStatus(t *testing.T) {
	r := probeOne(t, fixture("exit-early"), ready)
	if r.ExitStatus != "exit status 1" || r.Cause != "fatal: missing API key" || !strings.HasPrefix(r.Detail, "fatal: missing API key (exit 1 ") {
		t.Fatalf("exit-early: got exit %q cause %q detail %q, want exit status 1 and the stderr line verbatim", r.ExitStatus, r.Cause, r.Detail)
	}
}

// A mistyped command is a verdict, never a crash of the probe.
func TestMissingCommandIsExited(t *testing.T) {
	cases := []struct{ command, detail string }{
		{"./no-such-binary", noSuchFile},
		{"no-such-command-mcpshim", notOnPathErr},
	}
	for _, c := range cases {
		r := probeOne(t, Target{Name: "ghost", Command: c.command}, ready)
		if r.Outcome != Exited || !strings.Contains(r.Detail, c.detail) {
			t.Errorf("command %q: got %s %q, want EXITED containing %q", c.command, r.Outcome, r.Detail, c.detail)
		}
	}
}

// The command is looked up in the PATH the server gets, as the client does.
func TestCommandFoundOnServerPath(t *testing.T) {
	dir := t.TempDir()
	linkSelf(t, dir, "fake-server")
	target := Target{Name: "on-path", Command: "fake-server", Args: []string{"fixture", "healthy"}, Env: map[string]string{"PATH": dir}}
	if r := probeOne(t, target, ready); r.Outcome != Ready {
		t.Fatalf("command on the server's PATH %s: got %s %q, want READY", dir, r.Outcome, r.Detail)
	}
}

func TestEras(t *testing.T) {
	cases := []struct {
		name     string
		target   Target
		protocol string
		outcome  Outcome
		version  string
		detail   string
	}{
		{"both eras prefer modern", fixture("healthy"), "", Ready, mcp.ModernVersion, ""},
		{"modern only", fixture("modern-only"), "", Ready, mcp.ModernVersion, ""},
		{"legacy only falls back", fixture("legacy-only"), "", Ready, mcp.LegacyVersion, ""},
		{"forced legacy", fixture("healthy"), mcp.LegacyVersion, Ready, mcp.LegacyVersion, ""},
		{"forced legacy on modern only", fixture("modern-only"), mcp.LegacyVersion, ProtocolError, "", "Method not found"},
		{"forced modern on legacy only", fixture("legacy-only"), mcp.ModernVersion, ProtocolError, "", "Method not found"},
		{"server pings first", edgeTarget("ping-first"), "", Ready, mcp.LegacyVersion, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := probeOne(t, c.target, ready, func(o *Options) { o.Protocol = c.protocol })
			if r.Outcome != c.outcome || r.Protocol != c.version || !strings.Contains(r.Detail, c.detail) {
				t.Fatalf("probe %v with --protocol %q: got %s protocol %q %q, want %s protocol %q containing %q",
					c.target.Args, c.protocol, r.Outcome, r.Protocol, r.Detail, c.outcome, c.version, c.detail)
			}
		})
	}
}

// A server that answers the handshake and then goes silent gives up on time, not never.
func TestSilentAfterHandshake(t *testing.T) {
	r, deadline := probeUntilStarted(t, edgeTarget("list-silent"), func(r Result) bool { return r.LastEvent != ToolsListNoResponse })
	if r.Outcome != Timeout || r.LastEvent != ToolsListNoResponse || !strings.Contains(r.Detail, "tools/list") {
		t.Fatalf("list-silent with a %s deadline: got %s %q (last event %q), want TIMEOUT on tools/list (%s)", deadline, r.Outcome, r.Detail, r.LastEvent, ToolsListNoResponse)
	}
	if r.Elapsed > 3*deadline {
		t.Errorf("list-silent: gave up after %s, want at its %s deadline", r.Elapsed, deadline)
	}
}

// probeUntilStarted probes a server that must time out after it has done
// something (answered the handshake, written on stderr) with a 1s deadline,
// and again with twice the deadline while starved reports that it timed out
// before doing it: on a loaded machine the race-built fixture can take
// longer than a second to start. It returns the last result and its deadline.
func probeUntilStarted(t *testing.T, target Target, starved func(Result) bool) (Result, time.Duration) {
	t.Helper()
	for deadline := time.Second; ; deadline *= 2 {
		r := probeOne(t, target, deadline)
		if r.Outcome != Timeout || !starved(r) || deadline >= ready {
			return r, deadline
		}
		t.Logf("%v: timed out at %s before it started (last event %q); again with twice the deadline", target.Args, deadline, r.LastEvent)
	}
}

// A wedged server that writes on stderr is reported as active, not dead.
func TestTimeoutReportsStderrActivity(t *testing.T) {
	r, _ := probeUntilStarted(t, fixture("init-no-response"), func(r Result) bool { return !r.StderrActive })
	if r.Outcome != Timeout || !r.StderrActive || !strings.Contains(r.Detail, "fatal_error=Cannot read properties") {
		t.Fatalf("init-no-response: got %s %q (stderr active %v), want TIMEOUT naming the stderr line", r.Outcome, r.Detail, r.StderrActive)
	}
	if r.LastEvent != InitializeReceivedNoResponse {
		t.Errorf("init-no-response: got last event %q, want %q", r.LastEvent, InitializeReceivedNoResponse)
	}
}

func TestTools(t *testing.T) {
	cases := []struct {
		name     string
		target   Target
		want     []string
		warning  string
		protocol string
	}{
		{"paged", fixture("healthy", "--tools", "a,b,c,d,e", "--page-size", "2"), []string{"a", "b", "c", "d", "e"}, "", ""},
		{"paged legacy", fixture("healthy", "--tools", "a,b,c", "--page-size", "1"), []string{"a", "b", "c"}, "", mcp.LegacyVersion},
		{"zero tools", fixture("zero-tools"), []string{}, "zero tools listed", ""},
		{"no tools capability", edgeTarget("no-tools-cap"), []string{}, "declares no tools capability", ""},
		{"banner on stdout", fixture("banner"), []string{"add", "echo"}, `warning: stdout noise before the handshake, which the client skipped: "Starting Acme MCP server"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := probeOne(t, c.target, ready, func(o *Options) { o.Protocol = c.protocol })
			got := r.ToolNames()
			if r.Outcome != Ready || !slices.Equal(got, c.want) {
				t.Fatalf("probe %v: got %s %q tools %v, want READY with %v", c.target.Args, r.Outcome, r.Detail, got, c.want)
			}
			if c.warning != "" && !strings.Contains(r.Detail, c.warning) && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, c.warning) }) {
				t.Errorf("probe %v: got detail %q and warnings %q, want one containing %q", c.target.Args, r.Detail, r.Warnings, c.warning)
			}
		})
	}
}

// A report server: the tool surface shrinks with the credential.
func TestReportServerSurface(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"REPORT_API_TOKEN": "test-token"}, []string{"fetch_daily_report", "list_report_dates"}},
		{map[string]string{"REPORT_API_TOKEN": "test-token", "REPORT_SCOPE": "read"}, []string{"list_report_dates"}},
		{nil, []string{}},
	}
	for _, c := range cases {
		target := fixture("report")
		target.Env = c.env
		r := probeOne(t, target, ready, func(o *Options) { o.Env = withoutEnv(testEnv(), "REPORT_API_TOKEN", "REPORT_SCOPE") })
		if got := r.ToolNames(); r.Outcome != Ready || !slices.Equal(got, c.want) {
			t.Errorf("report with env %v: got %s tools %v, want READY with %v", c.env, r.Outcome, got, c.want)
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	// noise is judged at its deadline, so it keeps a short one, longer only
	// while a starved start times out before it has printed anything.
	cases := []struct {
		target Target
		short  bool
		detail string
	}{
		{edgeTarget("noise"), true, `stdout noise before the handshake: "Content-Length: 52"`},
		{edgeTarget("cursor-loop"), false, `tools/list failed: cursor "same" repeats`},
	}
	for _, c := range cases {
		var r Result
		if c.short {
			r, _ = probeUntilStarted(t, c.target, func(Result) bool { return true })
		} else {
			r = probeOne(t, c.target, ready)
		}
		if r.Outcome != ProtocolError || r.Detail != c.detail {
			t.Errorf("probe %v: got %s %q, want PROTOCOL_ERROR %q", c.target.Args, r.Outcome, r.Detail, c.detail)
		}
	}
}

var pidRE = regexp.MustCompile(`pid[ =](\d+)`)

// pids collects the pids a probe saw: the server's from the timeline, and any
// a fixture printed on stderr.
func pids(r Result) []int {
	var out []int
	lines := append([]string(nil), r.StderrTail...)
	for _, s := range r.Timeline {
		lines = append(lines, s.Detail)
	}
	for _, l := range lines {
		for _, m := range pidRE.FindAllStringSubmatch(l, -1) {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// A probe leaves nothing running: not the server, not what it started, not
// a server that ignores every polite signal.
func TestProbeLeavesNothingRunning(t *testing.T) {
	// The healthy ones must be up (stubborn's handlers installed, grandchild's
	// child spawned) before they are stopped; silent is stopped at its deadline.
	cases := []struct {
		name     string
		deadline time.Duration
		outcome  Outcome
	}{
		{"healthy", ready, Ready}, {"grandchild", ready, Ready}, {"stubborn", ready, Ready}, {"silent", time.Second, Timeout},
	}
	for _, c := range cases {
		name := c.name
		r := probeOne(t, fixture(name), c.deadline)
		if r.Outcome != c.outcome {
			t.Fatalf("%s with a %s deadline: got %s %q, want %s", name, c.deadline, r.Outcome, r.Detail, c.outcome)
		}
		ps := pids(r)
		want := 1
		if name == "grandchild" {
			want = 2
		}
		if len(ps) != want {
			t.Fatalf("%s: got pids %v from %q / %+v, want %d", name, ps, r.StderrTail, r.Timeline, want)
		}
		for _, pid := range ps {
			if !gone(pid) {
				t.Errorf("%s: pid %d after the probe: got alive, want gone", name, pid)
			}
		}
	}
}

func TestStderrIsRedacted(t *testing.T) {
	r := probeOne(t, fixture("stderr-chatty", "--lines", "3"), ready)
	joined := strings.Join(r.StderrTail, "\n")
	if r.Outcome != Ready || strings.Contains(joined, "sk-test-123456789abcdef") || !strings.Contains(joined, "Authorization: [REDACTED]") {
		t.Fatalf("stderr-chatty: got %s with stderr %q, want READY with the bearer token redacted", r.Outcome, joined)
	}
}

func TestRetries(t *testing.T) {
	// Only silent must time out; the others must answer however slow their start.
	cases := []struct {
		target   Target
		deadline time.Duration
		attempts int
	}{
		{fixture("silent"), 500 * time.Millisecond, 2},
		{fixture("exit-early"), ready, 1},
		{fixture("protocol-reject"), ready, 1},
	}
	for _, c := range cases {
		r := probeOne(t, c.target, c.deadline, func(o *Options) { o.Retries = 1 })
		if r.Attempts != c.attempts {
			t.Errorf("probe %v with one retry: got %d attempts (%s), want %d", c.target.Args, r.Attempts, r.Outcome, c.attempts)
		}
	}
}

// One deadline serves a whole run, so the servers that must answer run under
// a generous one and the silent ones, which must time out, under a short one.
func TestRunKeepsOrderAndReportsEach(t *testing.T) {
	cases := []struct {
		deadline time.Duration
		targets  []Target
		want     []Outcome
	}{
		{ready, []Target{fixture("healthy"), fixture("exit-early"), fixture("zero-tools")}, []Outcome{Ready, Exited, Ready}},
		{time.Second, []Target{fixture("silent"), named(fixture("silent"), "silent-2"), named(fixture("silent"), "silent-3")}, []Outcome{Timeout, Timeout, Timeout}},
	}
	for _, c := range cases {
		var done, names []string
		results := Run(t.Context(), c.targets, Options{Timeout: c.deadline, Parallel: 2, Env: testEnv(),
			OnDone: func(r Result) { done = append(done, r.Server) }})
		for i, r := range results {
			names = append(names, c.targets[i].Name)
			if r.Server != c.targets[i].Name || r.Outcome != c.want[i] {
				t.Errorf("%s deadline, result %d: got %s %s, want %s %s", c.deadline, i, r.Server, r.Outcome, c.targets[i].Name, c.want[i])
			}
		}
		slices.Sort(done)
		slices.Sort(names)
		if !slices.Equal(done, names) {
			t.Errorf("%s deadline, OnDone: got %v, want each of %v once", c.deadline, done, names)
		}
	}
}

// The timeline carries what the ledger needs: spawn, handshake sent and
// answered, tools listed, the end.
func TestTimeline(t *testing.T) {
	r := probeOne(t, fixture("legacy-only"), ready)
	var events []string
	for _, s := range r.Timeline {
		events = append(events, strings.TrimSpace(s.Event+" "+s.Method))
	}
	want := []string{
		"spawned", "request_sent server/discover", "response_received server/discover",
		"request_sent initialize", "response_received initialize", "notification_sent notifications/initialized",
		"request_sent tools/list", "response_received tools/list", "tools_listed", "stopped",
	}
	if !slices.Equal(events, want) {
		t.Fatalf("legacy-only timeline: got %q, want %q", events, want)
	}
	for i := 1; i < len(r.Timeline); i++ {
		if r.Timeline[i].At.Before(r.Timeline[i-1].At) {
			t.Errorf("timeline step %d %q at %s is before step %d at %s", i, events[i], r.Timeline[i].At, i-1, r.Timeline[i-1].At)
		}
	}
}

func named(t Target, name string) Target {
	t.Name = name
	return t
}

func withoutEnv(env []string, keys ...string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(keys, k)
	})
}

// Every server is spawned before any conversation starts, so the last
// server's deadline starts near the probe's start; with Parallel set, the
// conversations start once every slot is taken.
func TestRunSpawnsAllBeforeTalking(t *testing.T) {
	for _, parallel := range []int{0, 3} {
		var targets []Target
		for i := range 6 {
			tg := fixture("healthy")
			tg.Name = fmt.Sprintf("healthy-%d", i)
			targets = append(targets, tg)
		}
		results := Run(t.Context(), targets, Options{Timeout: ready, Parallel: parallel, Env: testEnv()})
		spawns := min(len(targets), parallel)
		if parallel == 0 {
			spawns = len(targets)
		}
		var lastSpawn, firstSend time.Time
		for _, r := range results[:spawns] {
			if r.Outcome != Ready {
				t.Fatalf("parallel %d: %s: got %s (%s), want READY", parallel, r.Server, r.Outcome, r.Detail)
			}
			for _, s := range r.Timeline {
				switch {
				case s.Event == "spawned" && s.At.After(lastSpawn):
					lastSpawn = s.At
				case s.Event == "request_sent" && (firstSend.IsZero() || s.At.Before(firstSend)):
					firstSend = s.At
				}
			}
		}
		// Equal times are allowed: Windows' wall clock ticks in 0.5-16 ms.
		if firstSend.Before(lastSpawn) {
			t.Errorf("parallel %d: first request sent at %s, before the last of the first %d spawns at %s",
				parallel, firstSend.Format(time.StampMicro), spawns, lastSpawn.Format(time.StampMicro))
		}
	}
}
