// Command genledger writes the ledgers of a synthetic fleet for the ledger
// benchmark: one file per server, as the shim names them, each holding the
// records of pairs of shims that ran at the same time (interleaved lines),
// with restarts, crashes, timeouts, refusals, spawn failures and noise among
// mostly healthy runs. Records are encoded by ledger.Record, the shim's own
// encoder, so the bytes are the real format. The same seed and flags write
// the same bytes.
//
//	go run ./bench/genledger -dir /tmp/fleet -size 1073741824
//
// -lean gives runs of about three records each (start, handshake or failure,
// end) instead of hundreds of tool calls: the shape of a year of short
// sessions, many runs in few bytes. -runs stops after that many runs.
//
//	go run ./bench/genledger -dir /tmp/runs -lean -runs 1000000 -servers 10
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

func main() {
	dir := flag.String("dir", "", "write the ledgers into `DIR` (created)")
	size := flag.Int64("size", 1<<30, "stop after about this many `BYTES`")
	servers := flag.Int("servers", 40, "how many servers in the fleet")
	runs := flag.Int64("runs", 0, "stop after this many `RUNS` instead (0: by -size)")
	lean := flag.Bool("lean", false, "about three records a run: no tools/list, no tool calls")
	seed := flag.Uint64("seed", 1, "random seed: the same seed writes the same bytes")
	flag.Parse()
	if *dir == "" || *servers < 1 {
		fmt.Fprintln(os.Stderr, "usage: genledger -dir DIR [-size BYTES | -runs N] [-lean] [-servers N] [-seed N]")
		os.Exit(64)
	}
	if *runs > 0 {
		*size = math.MaxInt64
	}
	if err := generate(*dir, *size, *runs, *servers, *seed, *lean); err != nil {
		fmt.Fprintf(os.Stderr, "genledger: %v\n", err)
		os.Exit(1)
	}
}

func generate(dir string, size, maxRuns int64, servers int, seed uint64, lean bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	files := make([]*bufio.Writer, servers)
	clocks := make([]time.Time, servers)
	start := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for i := range files {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("server-%02d.jsonl", i)))
		if err != nil {
			return err
		}
		defer f.Close()
		w := bufio.NewWriterSize(f, 1<<20)
		defer w.Flush()
		files[i] = w
		clocks[i] = start.Add(time.Duration(rng.IntN(3600)) * time.Second)
	}
	var written, runs, records int64
	var buf bytes.Buffer
	for written < size && (maxRuns == 0 || runs < maxRuns) {
		i := rng.IntN(servers)
		g := gen{rng: rng, server: fmt.Sprintf("server-%02d", i)}
		session := g.session
		if lean {
			session = g.leanSession
		}
		// Two shims of one server at once: two clients, or a client and a probe.
		recs := append(session(clocks[i]), session(clocks[i].Add(time.Duration(rng.IntN(500))*time.Millisecond))...)
		sort.SliceStable(recs, func(a, b int) bool { return recs[a].Time.Before(recs[b].Time) })
		buf.Reset()
		for k := range recs {
			recs[k].Encode(&buf)
		}
		if _, err := files[i].Write(buf.Bytes()); err != nil {
			return err
		}
		written += int64(buf.Len())
		records += int64(len(recs))
		runs += int64(g.runs)
		clocks[i] = recs[len(recs)-1].Time.Add(time.Duration(1+rng.IntN(60)) * time.Second)
	}
	fmt.Printf("%d bytes, %d records, %d runs, %d servers in %s\n", written, records, runs, servers, dir)
	return nil
}

// gen makes the records of shims of one server.
type gen struct {
	rng    *rand.Rand
	server string
	runs   int
}

var (
	envNames = []string{"HOME", "PATH", "USER", "LANG", "TERM", "SHELL", "TMPDIR", "XDG_STATE_HOME", "NODE_OPTIONS",
		"npm_config_cache", "GITHUB_TOKEN", "API_BASE_URL", "LOG_LEVEL", "HTTPS_PROXY", "NO_PROXY", "TZ"}
	tools = []string{"search", "fetch", "read_file", "write_file", "list_dir", "run_query", "create_issue", "get_issue"}
)

// session is one shim: one to three runs (restarts after a crash).
func (g *gen) session(t time.Time) []ledger.Record {
	shim := ledger.NewID("shim", t)
	var out []ledger.Record
	seq := uint64(0)
	prev := ""
	for generation := 1; generation <= 3; generation++ {
		g.runs++
		run := ledger.NewID("run", t)
		pid := 1000 + g.rng.IntN(60000)
		emit := func(dt time.Duration, phase phases.Phase, event string, fields ...ledger.Field) {
			t = t.Add(dt)
			seq++
			out = append(out, ledger.Record{Time: t, Shim: shim, Run: run, Seq: seq, Server: g.server, PID: pid,
				Phase: phase, Event: event, Fields: fields})
		}
		ms := func(lo, hi int) time.Duration {
			return time.Duration(lo*1000+g.rng.IntN((hi-lo)*1000+1)) * time.Microsecond
		}
		start := []ledger.Field{ledger.F("command", "/usr/local/bin/npx"), ledger.F("argv", []string{"-y", "@acme/" + g.server + "-mcp"}),
			ledger.F("cwd", "/"), ledger.F("env_names", envNames), ledger.F("path", "/usr/local/bin:/usr/bin:/bin"),
			ledger.F("generation", generation), ledger.F("egress", "unwitnessed")}
		if prev != "" {
			start = append(start, ledger.F("previous_run", prev))
		}
		emit(0, phases.Launch, phases.SpawnRequested, start...)
		fate := g.rng.IntN(100)
		if fate < 2 && generation == 1 {
			emit(ms(0, 2), phases.Launch, phases.SpawnFailed, ledger.F("error_class", "not_found"),
				ledger.F("error", `exec: "npx": executable file not found in $PATH`), ledger.F("hint", "use an absolute path; clients do not read your shell's PATH"))
			return out
		}
		emit(ms(2, 30), phases.Launch, phases.Spawned, ledger.F("pid", pid), ledger.F("pgid", pid), ledger.F("generation", generation))
		exit := func(code int, handshake bool, last string, tail ...string) {
			emit(ms(0, 5), phases.Launch, phases.Exited, ledger.F("exit_code", code), ledger.F("duration_ms", ms(100, 90000)),
				ledger.F("stderr_tail", tail), ledger.F("requested_by_shim", code == 0), ledger.F("last_event", last), ledger.F("handshake", handshake))
		}
		if generation == 1 {
			if fate < 4 {
				emit(ms(1, 3), phases.Transport, phases.StdoutNoise, ledger.F("bytes", 25), ledger.F("sha256", sha("noise")),
					ledger.F("preview", "Starting Acme MCP server"), ledger.F("before_handshake", true))
			}
			emit(ms(1, 50), phases.Handshake, phases.InitializeReceived, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"),
				ledger.F("client_name", "claude-code"), ledger.F("client_version", "2.0.14"))
			switch {
			case fate < 8:
				exit(1, false, phases.InitializeReceived, "Error: Cannot find module './config.json'", "fatal: missing API key")
				return out
			case fate < 10:
				emit(ms(1, 5), phases.Handshake, phases.InitializeFailed, ledger.F("request_id", "1"), ledger.F("code", -32602),
					ledger.F("message", "unsupported protocolVersion"), ledger.F("latency_ms", ms(1, 5)))
				exit(0, false, phases.InitializeFailed)
				return out
			case fate < 13:
				emit(30*time.Second, phases.Handshake, phases.HandshakeTimeout, ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", 30*time.Second))
				emit(ms(0, 5000), phases.Interruption, phases.KillRequested, ledger.F("signal", "SIGTERM"), ledger.F("reason", "client left"))
				exit(0, false, phases.InitializeReceived, "fatal_error=Cannot read properties of undefined (reading 'tools')")
				return out
			}
			emit(ms(1, 40), phases.Handshake, phases.InitializeResponded, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"),
				ledger.F("server_name", g.server), ledger.F("server_version", "1.4.0"), ledger.F("capabilities", []string{"logging", "tools"}),
				ledger.F("latency_ms", ms(1, 40)))
			emit(ms(0, 2), phases.Handshake, phases.InitializedReceived)
			emit(ms(0, 5), phases.Discovery, phases.ToolsListReceived, ledger.F("request_id", "2"))
			digests := make([]ledger.Field, len(tools))
			for k, name := range tools {
				digests[k] = ledger.F(name, "sha256/v1:"+sha(g.server+name))
			}
			emit(ms(1, 20), phases.Discovery, phases.ToolsListResponded, ledger.F("request_id", "2"), ledger.F("page_tools", len(tools)),
				ledger.F("complete", true), ledger.F("tool_count", len(tools)), ledger.F("tools", tools), ledger.F("tool_digests", digests),
				ledger.F("surface_sha256", "sha256/v1:"+sha(g.server)), ledger.F("latency_ms", ms(1, 20)))
		} else {
			emit(ms(5, 40), phases.Supervision, phases.HandshakeReplayed, ledger.F("protocol_version", "2025-11-25"),
				ledger.F("modern", false), ledger.F("replayed", []string{"initialize"}), ledger.F("latency_ms", ms(5, 40)))
		}
		calls := 20 + g.rng.IntN(300)
		crashAt := -1
		if g.rng.IntN(100) < 5 {
			crashAt = g.rng.IntN(calls)
		}
		for c := 0; c < calls; c++ {
			id := fmt.Sprint(3 + c)
			tool := tools[g.rng.IntN(len(tools))]
			emit(ms(50, 4000), phases.Execution, phases.ToolCallReceived, ledger.F("request_id", id), ledger.F("tool", tool),
				ledger.F("args_bytes", 20+g.rng.IntN(400)), ledger.F("args_sha256", sha(id+tool)))
			if c == crashAt {
				emit(ms(1, 50), phases.Interruption, phases.PendingFailed, ledger.F("request_id", id), ledger.F("method", "tools/call"),
					ledger.F("direction", "client"), ledger.F("tool", tool), ledger.F("message", "mcpshim: server "+g.server+" exited with code 1 before answering"))
				exit(1, true, phases.ToolCallReceived, "panic: runtime error: invalid memory address or nil pointer dereference")
				emit(ms(0, 1), phases.Supervision, phases.RestartScheduled, ledger.F("attempt", generation), ledger.F("delay_ms", ms(100, 400)),
					ledger.F("reason", "exit code 1"), ledger.F("previous_run", run))
				break
			}
			outcome, extra := "success", []ledger.Field(nil)
			switch r := g.rng.IntN(100); {
			case r < 3:
				outcome = "is_error"
			case r < 4:
				outcome, extra = "rpc_error", []ledger.Field{ledger.F("code", -32602), ledger.F("message", "invalid params")}
			}
			fields := append([]ledger.Field{ledger.F("request_id", id), ledger.F("tool", tool), ledger.F("outcome", outcome),
				ledger.F("latency_ms", ms(1, 900)), ledger.F("result_bytes", 50+g.rng.IntN(20000))}, extra...)
			emit(ms(1, 900), phases.Execution, phases.ToolCallResponded, fields...)
		}
		if crashAt >= 0 {
			prev = run
			t = t.Add(ms(100, 400))
			continue
		}
		emit(ms(100, 60000), phases.Interruption, phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
		exit(0, true, phases.ToolCallResponded)
		return out
	}
	return out
}

// sha is a stand-in digest: 64 hex digits derived from s.
func sha(s string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return fmt.Sprintf("%016x%016x%016x%016x", h, h*31, h*37, h*41)
}

// leanSession is one shim whose runs have about three records each: the
// start, the handshake or what stopped it, and the end. One run in twenty
// crashes after its handshake and is restarted (up to three runs), one in
// two hundred has no end (its shim was SIGKILLed).
func (g *gen) leanSession(t time.Time) []ledger.Record {
	shim := ledger.NewID("shim", t)
	var out []ledger.Record
	seq := uint64(0)
	prev := ""
	for generation := 1; generation <= 3; generation++ {
		g.runs++
		run := ledger.NewID("run", t)
		pid := 1000 + g.rng.IntN(60000)
		emit := func(dt time.Duration, phase phases.Phase, event string, fields ...ledger.Field) {
			t = t.Add(dt)
			seq++
			out = append(out, ledger.Record{Time: t, Shim: shim, Run: run, Seq: seq, Server: g.server, PID: pid,
				Phase: phase, Event: event, Fields: fields})
		}
		ms := func(lo, hi int) time.Duration {
			return time.Duration(lo*1000+g.rng.IntN((hi-lo)*1000+1)) * time.Microsecond
		}
		start := []ledger.Field{ledger.F("command", "npx"), ledger.F("generation", generation)}
		if prev != "" {
			start = append(start, ledger.F("previous_run", prev))
		}
		emit(0, phases.Launch, phases.SpawnRequested, start...)
		exit := func(code int, handshake bool, last string, tail ...string) {
			fields := []ledger.Field{ledger.F("exit_code", code), ledger.F("requested_by_shim", code == 0), ledger.F("last_event", last)}
			if len(tail) > 0 {
				fields = append(fields, ledger.F("stderr_tail", tail))
			}
			if handshake {
				fields = append(fields, ledger.F("handshake", true))
			}
			emit(ms(0, 5), phases.Launch, phases.Exited, fields...)
		}
		responded := func() {
			emit(ms(20, 900), phases.Handshake, phases.InitializeResponded, ledger.F("protocol_version", "2025-11-25"), ledger.F("latency_ms", ms(1, 40)))
		}
		switch fate := g.rng.IntN(200); {
		case fate < 1:
			responded() // no end: the shim was SIGKILLed
			return out
		case fate < 5 && generation == 1:
			emit(ms(0, 2), phases.Launch, phases.SpawnFailed, ledger.F("error_class", "not_found"),
				ledger.F("error", `exec: "npx": executable file not found in $PATH`), ledger.F("hint", "use an absolute path"))
			return out
		case fate < 9:
			emit(ms(1, 3), phases.Transport, phases.StdoutNoise, ledger.F("bytes", 25), ledger.F("sha256", sha("noise")),
				ledger.F("preview", "Starting Acme MCP server"), ledger.F("before_handshake", true))
			exit(0, false, phases.Spawned)
			return out
		case fate < 15:
			emit(ms(1, 50), phases.Handshake, phases.InitializeReceived, ledger.F("request_id", "1"), ledger.F("protocol_version", "2025-11-25"))
			exit(1, false, phases.InitializeReceived, "fatal: missing API key")
			return out
		case fate < 19:
			emit(ms(1, 5), phases.Handshake, phases.InitializeFailed, ledger.F("request_id", "1"), ledger.F("code", -32602),
				ledger.F("message", "unsupported protocolVersion"), ledger.F("latency_ms", ms(1, 5)))
			exit(0, false, phases.InitializeFailed)
			return out
		case fate < 23:
			emit(30*time.Second, phases.Handshake, phases.HandshakeTimeout, ledger.F("last_event", phases.InitializeReceivedNoResponse), ledger.F("timeout_ms", 30*time.Second))
			exit(0, false, phases.InitializeReceived)
			return out
		case fate < 33:
			responded()
			exit(1, true, phases.InitializeResponded, "panic: runtime error: invalid memory address or nil pointer dereference")
			emit(ms(0, 1), phases.Supervision, phases.RestartScheduled, ledger.F("attempt", generation), ledger.F("delay_ms", ms(100, 400)),
				ledger.F("reason", "exit code 1"), ledger.F("previous_run", run))
			prev = run
			t = t.Add(ms(100, 400))
			continue
		}
		responded()
		exit(0, true, phases.InitializeResponded)
		return out
	}
	return out
}
