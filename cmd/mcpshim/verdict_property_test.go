package main

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/otelexport"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// TestVerdictViewsAgree writes ledgers of random runs (local, remote and
// probed; every way of starting, shaking hands, listing, calling, leaving
// and ending, in any mix) and checks that no view disagrees with the
// verdict on each run: ledger --json, the table, why --json, show, stats,
// the HTML report, and the OTLP export, which judges a run at its end
// record while the others read all of it.
func TestVerdictViewsAgree(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	seen := map[string]int{} // outcomes judged, and roots the OTLP check saw
	for seed := range uint64(n) {
		dir := t.TempDir()
		path := filepath.Join(dir, "srv.jsonl")
		var buf bytes.Buffer
		g := &runGen{r: rand.New(rand.NewPCG(seed, 22)), buf: &buf}
		for i := range 1 + g.r.IntN(4) {
			g.run(fmt.Sprintf("run_%03d_%d", seed, i), 5_000_000+int(seed)*10+i)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if !agree(t, path, seen) {
			t.Fatalf("seed %d: the views disagree with the verdict; the ledger:\n%s", seed, buf.String())
		}
	}
	// The mixes must reach every outcome, or the agreement proves little.
	for _, o := range []string{verdict.Ready, verdict.Ended, verdict.Timeout, verdict.Exited, verdict.ProtocolError, verdict.Crashed,
		verdict.Unrecorded, verdict.Unreachable, verdict.AuthRequired, "otlp"} {
		if seen[o] == 0 && !testing.Short() {
			t.Errorf("no run of %d seeds was %s: %v", n, o, seen)
		}
	}
}

// agree checks every view of the ledger at path against the verdict on
// each of its runs, judged here from the records.
func agree(t *testing.T, path string, seen map[string]int) bool {
	t.Helper()
	ok := true
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		ok = false
	}
	entries := ledgertest.ReadEntries(t, path)
	folds := map[string]*verdict.Fold{}
	var order []string
	spans := map[string]*otelexport.Span{}
	m := otelexport.NewMapper(nil)
	for i := range entries {
		e := &entries[i]
		if folds[e.Run] == nil {
			folds[e.Run] = &verdict.Fold{}
			order = append(order, e.Run)
		}
		folds[e.Run].Add(e)
		for _, s := range m.Add(e) {
			if strings.HasPrefix(s.Name, "run ") {
				spans[attrOf(s, "mcpshim.run")] = s
			}
		}
	}
	for _, s := range m.Flush() { // the roots held for what follows an exit
		if strings.HasPrefix(s.Name, "run ") {
			spans[attrOf(s, "mcpshim.run")] = s
		}
	}
	var list struct {
		Runs []map[string]any `json:"runs"`
	}
	ledgerJSON(t, &list, path)
	table, _, _ := runLedgerCmd(t, path)
	htmlFile := filepath.Join(t.TempDir(), "r.html")
	runLedgerCmd(t, "report", "--html", htmlFile, path)
	page, _ := os.ReadFile(htmlFile)
	failed := 0
	for _, run := range list.Runs {
		id := run["run"].(string)
		v := verdict.Judge(folds[id], time.Now(), false)
		seen[v.Outcome]++
		if v.Failed {
			failed++
		}
		short := run["short"].(string)
		if run["outcome"] != v.Outcome || run["failed"] != v.Failed || str(run["detail"]) != v.Reason || str(run["cause"]) != v.Cause ||
			str(run["advice"]) != v.Advice || run["last_event"] != v.LastEvent {
			fail("%s: ledger --json %v %v %q %q %q %v; the verdict %s %v %q %q %q %s", id, run["outcome"], run["failed"], run["detail"],
				run["cause"], run["advice"], run["last_event"], v.Outcome, v.Failed, v.Reason, v.Cause, v.Advice, v.LastEvent)
		}
		row := rowOf(table, short)
		if strings.HasPrefix(row, "!") != v.Failed || !strings.Contains(row, "  "+v.Outcome+"  ") || !strings.HasSuffix(row, report.OneLine(v.Reason, 160)) {
			fail("%s: table row %q; the verdict %s failed=%v %q", id, row, v.Outcome, v.Failed, v.Reason)
		}
		var why struct {
			Runs []struct{ Answers []verdict.Answer }
		}
		ledgerJSON(t, &why, "why", id, path)
		for i, a := range why.Runs[0].Answers {
			if w := v.Answers[i]; a.Key != w.Key || a.Answer != w.Answer || a.Reason != w.Reason {
				fail("%s: why says %s %s %q; the verdict %s %s %q", id, a.Key, a.Answer, a.Reason, w.Key, w.Answer, w.Reason)
			}
		}
		show, _, _ := runLedgerCmd(t, "show", id, path)
		if !strings.Contains(show, "\ndiagnosis: "+v.Outcome+": "+v.Reason+"\n") {
			fail("%s: show's diagnosis; the verdict %s %q:\n%s", id, v.Outcome, v.Reason, show)
		}
		if b := badgeOf(string(page), short); b == nil || (b[1] != "") != v.Failed || html.UnescapeString(b[2]) != v.Reason || b[3] != v.Outcome {
			fail("%s: HTML badge %q; the verdict %s %v %q", id, b, v.Outcome, v.Failed, v.Reason)
		}
		if spans[id] != nil {
			seen["otlp"]++
		}
		if root := spans[id]; root != nil && (attrOf(root, "mcpshim.outcome") != v.Outcome ||
			attrOf(root, "mcpshim.verdict.reason") != v.Reason || attrOf(root, "mcpshim.verdict.cause") != v.Cause) {
			fail("%s: the OTLP root, judged at the end record, says %s %q %q; the verdict %s %q %q", id,
				attrOf(root, "mcpshim.outcome"), attrOf(root, "mcpshim.verdict.reason"), attrOf(root, "mcpshim.verdict.cause"), v.Outcome, v.Reason, v.Cause)
		}
	}
	var stats struct {
		Servers []struct{ Failed int }
	}
	ledgerJSON(t, &stats, "stats", path)
	if len(stats.Servers) != 1 || stats.Servers[0].Failed != failed {
		fail("stats: %+v, want %d failed", stats.Servers, failed)
	}
	return ok
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func attrOf(s *otelexport.Span, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func rowOf(table, short string) string {
	for _, row := range strings.Split(table, "\n") {
		if strings.Contains(row, "  "+short+"  ") {
			return row
		}
	}
	return ""
}

var propBadgeRE = regexp.MustCompile(`<span class="badge( failed)?(?: fixable)?" title="([^"]*)">([^ <]+) ([A-Z_]+)</span>`)

// badgeOf is [match, failed, title, outcome] of short's badge.
func badgeOf(page, short string) []string {
	for _, m := range propBadgeRE.FindAllStringSubmatch(page, -1) {
		if m[3] == short {
			return []string{m[0], m[1], m[2], m[4]}
		}
	}
	return nil
}

// runGen writes random runs as ledger lines, each a plausible life: the
// order of its records is the order a shim or a probe writes them.
type runGen struct {
	r   *rand.Rand
	buf *bytes.Buffer
	evs []ledgertest.Ev
	dt  time.Duration
}

func (g *runGen) add(event string, fields ...ledger.Field) {
	g.dt += time.Duration(1+g.r.IntN(1500)) * time.Millisecond
	g.evs = append(g.evs, ledgertest.Ev{DT: g.dt, Event: event, Fields: fields})
}

func (g *runGen) maybe(p float64) bool { return g.r.Float64() < p }

var propTails = [][]string{nil, {"starting"}, {"fatal: missing API key"},
	{"Error: WEATHER_API_KEY is not set", "    at main (/srv/x.mjs:3:9)", "", "Node.js v20.20.2"},
	{"Traceback (most recent call last):", "KeyError: 'WEATHER_API_KEY'"}, {"panic: boom", "", "goroutine 1 [running]:"}}

func (g *runGen) run(id string, pid int) {
	g.evs, g.dt = nil, 0
	origin := ""
	if g.maybe(0.15) {
		origin = phases.OriginProbe
	}
	remote := g.maybe(0.25)
	done := false
	if remote {
		if g.maybe(0.2) {
			g.add(phases.ConnectFailed, ledger.F("url", "http://127.0.0.1:9/mcp"), ledger.F("error_class", "refused"), ledger.F("error", "connection refused"))
			g.tail(true)
			g.write(id, pid, origin)
			return
		}
		g.add(phases.Connected, ledger.F("url", "http://127.0.0.1:9/mcp"), ledger.F("generation", 1))
	} else {
		g.add(phases.SpawnRequested, ledger.F("generation", 1+g.r.IntN(3)), ledger.F("egress", []string{"witnessed", "unwitnessed"}[g.r.IntN(2)]))
		if g.maybe(0.1) {
			g.add(phases.SpawnFailed, ledger.F("error_class", "not_found"), ledger.F("error", `exec: "x": executable file not found in $PATH`), ledger.F("hint", "use an absolute path"))
			g.tail(true)
			g.write(id, pid, origin)
			return
		}
		g.add(phases.Spawned, ledger.F("pid", pid))
		if g.maybe(0.2) {
			g.add(phases.StdoutNoise, ledger.F("preview", "Starting server"), ledger.F("diverted", g.maybe(0.3)))
		}
	}
	switch g.r.IntN(5) {
	case 0: // nothing reaches it
	case 1:
		g.add(phases.DiscoverReceived, ledger.F("request_id", "1"))
		if g.maybe(0.5) {
			g.add(phases.DiscoverFailed, ledger.F("code", -32601), ledger.F("message", "method not found"))
			g.add(phases.InitializeReceived, ledger.F("request_id", "2"))
		}
		fallthrough
	default:
		if g.r.IntN(5) == 0 {
			break
		}
		g.add(phases.InitializeReceived, ledger.F("request_id", "1"))
		if remote && g.maybe(0.3) {
			status := []int{401, 404, 503}[g.r.IntN(3)]
			g.add(phases.HTTPExchange, ledger.F("http_method", "POST"), ledger.F("method", "initialize"), ledger.F("status", status))
			if status == 401 {
				g.add(phases.AuthFailed, ledger.F("status", 401), ledger.F("www_authenticate", `Bearer realm="x"`))
			}
			break
		}
		switch g.r.IntN(4) {
		case 0:
			g.add(phases.InitializeFailed, ledger.F("code", -32602), ledger.F("message", "unsupported protocolVersion"))
		case 1:
		default:
			g.add(phases.InitializeResponded, ledger.F("protocol_version", "2025-11-25"), ledger.F("server_name", "srv"))
			done = true
		}
	}
	if !done && g.maybe(0.3) {
		g.add(phases.HandshakeTimeout, ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", 1000.0))
	}
	if done {
		if g.maybe(0.7) {
			g.add(phases.InitializedReceived)
		}
		if g.maybe(0.7) {
			g.add(phases.ToolsListReceived, ledger.F("request_id", "2"))
			if g.maybe(0.8) {
				g.add(phases.ToolsListResponded, ledger.F("complete", true), ledger.F("tool_count", g.r.IntN(3)))
			} else {
				g.add(phases.ToolsListFailed, ledger.F("code", -32603), ledger.F("message", "boom"))
			}
			if g.maybe(0.2) {
				g.add(phases.ToolsMissing, ledger.F("missing", []string{"fetch"}), ledger.F("mode", []string{"warn", "enforce"}[g.r.IntN(2)]))
			}
		}
		for range g.r.IntN(3) {
			g.add(phases.ToolCallReceived, ledger.F("tool", "echo"))
			g.add(phases.ToolCallResponded, ledger.F("tool", "echo"), ledger.F("outcome", []string{"success", "is_error", "rpc_error"}[g.r.IntN(3)]))
		}
	}
	if g.maybe(0.2) {
		g.add(phases.ExternalAttempt, ledger.F("host", "api.example.test"), ledger.F("port", 443))
	}
	left := g.maybe(0.5)
	if left {
		g.add(phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
	}
	killed := left && g.maybe(0.4)
	if killed {
		g.add(phases.KillRequested, ledger.F("signal", "SIGTERM"), ledger.F("reason", "client disconnected"))
	}
	if g.maybe(0.15) {
		g.write(id, pid, origin) // no end: the shim was killed
		return
	}
	switch {
	case remote:
		fields := []ledger.Field{ledger.F("reason", "stdin_eof")}
		if !left {
			fields = []ledger.Field{ledger.F("reason", "unreachable: HTTP 503 Service Unavailable"), ledger.F("exit_code", 69)}
		}
		g.add(phases.Disconnected, append(fields, ledger.F("handshake", done))...)
	default:
		code, sig := []int{0, 1, 3}[g.r.IntN(3)], ""
		if killed || g.maybe(0.15) {
			code, sig = -1, []string{"SIGTERM", "SIGKILL"}[g.r.IntN(2)]
		}
		fields := []ledger.Field{ledger.F("exit_code", code), ledger.F("requested_by_shim", left || origin != "" && g.maybe(0.8)),
			ledger.F("handshake", done), ledger.F("stderr_tail", propTails[g.r.IntN(len(propTails))])}
		if sig != "" {
			fields = append(fields, ledger.F("signal", sig))
		}
		g.add(phases.Exited, fields...)
	}
	g.tail(remote)
	g.write(id, pid, origin)
}

// tail adds what comes after a run's end record: the supervisor's and the
// client's, which may change only the advice.
func (g *runGen) tail(remote bool) {
	switch {
	case remote && g.maybe(0.3):
		g.add(phases.ReconnectsExhausted, ledger.F("failures", 3))
	case g.maybe(0.3):
		g.add(phases.RestartsExhausted, ledger.F("attempts", g.r.IntN(4)))
	case g.maybe(0.3):
		g.add(phases.RestartScheduled, ledger.F("attempt", 1))
		g.add(phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
	}
}

func (g *runGen) write(id string, pid int, origin string) {
	for i := range g.evs {
		g.evs[i].Origin = origin
	}
	ledgertest.EncodeRun(g.buf, "srv", id, pid, g.evs...)
}
