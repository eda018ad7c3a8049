package verdict_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

var f = ledger.F

const ms = time.Millisecond

// entries scripts one run as ledger lines and reads them back.
func entries(t *testing.T, origin string, evs []rec) []ledger.Entry {
	t.Helper()
	var out []ledgertest.Ev
	for _, e := range evs {
		if e.origin == "" {
			e.origin = origin
		}
		out = append(out, ledgertest.Ev{DT: e.dt, Event: e.event, Fields: e.fields, Origin: e.origin})
	}
	var buf bytes.Buffer
	ledgertest.EncodeRun(&buf, "srv", "run_A", 4242, out...)
	var es []ledger.Entry
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		e, err := ledger.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return es
}

func judge(es []ledger.Entry, alive bool) verdict.Verdict {
	var fold verdict.Fold
	for i := range es {
		fold.Add(&es[i])
	}
	return verdict.Judge(&fold, ledgertest.T0.Add(time.Hour), alive)
}

// The start of most runs: spawned, and the client's initialize.
func launch(evs ...rec) []rec {
	return append([]rec{
		{0, phases.SpawnRequested, []ledger.Field{f("generation", 1), f("egress", "unwitnessed")}, ""},
		{2 * ms, phases.Spawned, []ledger.Field{f("pid", 4242)}, ""},
		{3 * ms, phases.InitializeReceived, []ledger.Field{f("request_id", "1"), f("protocol_version", "2025-11-25")}, ""},
	}, evs...)
}

func handshake(evs ...rec) []rec {
	return launch(append([]rec{
		{10 * ms, phases.InitializeResponded, []ledger.Field{f("request_id", "1"), f("protocol_version", "2025-11-25")}, ""},
		{11 * ms, phases.InitializedReceived, nil, ""},
	}, evs...)...)
}

func listed(n int, evs ...rec) []rec {
	return handshake(append([]rec{{20 * ms, phases.ToolsListResponded, []ledger.Field{f("tool_count", n), f("complete", true)}, ""}}, evs...)...)
}

func exited(dt time.Duration, code int, fields ...ledger.Field) rec {
	return rec{dt, phases.Exited, append([]ledger.Field{f("exit_code", code)}, fields...), ""}
}

func left(dt time.Duration) rec {
	return rec{dt, phases.ClientDisconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}
}

func kill(dt time.Duration) rec {
	return rec{dt, phases.KillRequested, []ledger.Field{f("signal", "SIGTERM"), f("reason", "client disconnected")}, ""}
}

var node20Crash = []string{"file:///srv/index.mjs:3", "  throw new Error(\"WEATHER_API_KEY is not set\");", "  ^", "",
	"Error: WEATHER_API_KEY is not set", "    at file:///srv/index.mjs:3:9", "", "Node.js v20.20.2"}

func remote(evs ...rec) []rec {
	return append([]rec{{0, phases.Connected, []ledger.Field{f("url", "http://127.0.0.1:9/mcp"), f("address", "127.0.0.1:9"), f("generation", 1)}, ""}}, evs...)
}

func exchange(dt time.Duration, method string, status int) rec {
	return rec{dt, phases.HTTPExchange, []ledger.Field{f("http_method", "POST"), f("method", method), f("status", status)}, ""}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name    string
		origin  string
		evs     []rec
		alive   bool
		outcome string
		failed  bool
		cause   string
		reason  string // a part of the reason
		advice  string // a part of the advice; "-" for none
		not     string // what neither the reason, the advice nor an answer may say
		answer  string // a part of the "initialized" answer's reason
		connect string // a part of the "launched" answer's reason
	}{
		{name: "healthy, the client left", evs: listed(2, left(time.Second), exited(time.Second+5*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left after", advice: "-"},
		{name: "issue 1: a fatal line and exit 1, the client closed stdin at once",
			evs: launch(left(3*ms+300*time.Microsecond), exited(8*ms, 1, f("requested_by_shim", true), f("stderr_cause", "fatal: missing API key"),
				f("stderr_tail", []string{"fatal: missing API key"}), f("last_event", "initialize_received"))),
			outcome: verdict.Exited, failed: true, cause: "fatal: missing API key",
			reason: "fatal: missing API key (exit 1 before answering the handshake)", advice: "a retry fails the same way",
			not: "timeout", answer: "the process ended before the handshake (exit 1): fatal: missing API key"},
		{name: "issue 1: the server takes 0.3 s to fail",
			evs:     launch(left(4*ms), exited(300*ms, 1, f("requested_by_shim", true), f("stderr_tail", []string{"starting", "fatal: missing API key"}))),
			outcome: verdict.Exited, failed: true, cause: "fatal: missing API key", not: "timeout"},
		{name: "issue 2: exit 0 on stdin EOF, the client left first",
			evs:     launch(left(4*ms), exited(6*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left 4ms after the start, before the handshake", advice: "look at the client",
			not: "slow", answer: "the client left"},
		{name: "issue 3: a silent server, the client gave up after 1.5 s",
			evs:     launch(left(1500*ms), kill(3500*ms), exited(3510*ms, -1, f("signal", "SIGTERM"), f("requested_by_shim", true))),
			outcome: verdict.Timeout, failed: true, reason: "the client gave up after 1.5s (initialize_received_no_response)",
			advice: "never answered", not: "exited before", answer: "the client gave up after 1.5s and mcpshim stopped the server"},
		{name: "a silent server, the client left at once", evs: launch(left(5*ms), kill(2*time.Second), exited(2*time.Second, -1, f("signal", "SIGTERM"), f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "mcpshim stopped the server", not: "slow"},
		{name: "the shim's handshake deadline, still waiting", alive: true,
			evs:     launch(rec{30 * time.Second, phases.HandshakeTimeout, []ledger.Field{f("last_event", "initialize_received_no_response"), f("timeout_ms", 30000.0)}, ""}),
			outcome: verdict.Timeout, failed: true, reason: "no handshake answer in 30s (initialize_received_no_response)"},
		{name: "still starting", alive: true, evs: launch(), outcome: verdict.Running, answer: "still waiting"},
		{name: "the shim was killed", evs: launch(), outcome: verdict.Unrecorded, failed: true, answer: "the ledger stops"},
		{name: "a missing binary", evs: []rec{{0, phases.SpawnRequested, nil, ""}, {ms, phases.SpawnFailed,
			[]ledger.Field{f("error_class", "not_found"), f("error", `exec: "nope": executable file not found in $PATH`), f("hint", "use an absolute path")}, ""}},
			outcome: verdict.Exited, failed: true, cause: `exec: "nope": executable file not found in $PATH`, advice: "use an absolute path"},
		{name: "node 20 throws at start: the Error line, not Node's version line",
			evs:     launch(exited(40*ms, 1, f("stderr_tail", node20Crash))),
			outcome: verdict.Exited, failed: true, cause: "Error: WEATHER_API_KEY is not set", not: "Node.js v20"},
		{name: "a refused handshake", evs: launch(rec{5 * ms, phases.InitializeFailed, []ledger.Field{f("code", -32602), f("message", "unsupported protocolVersion")}, ""},
			left(10*ms), exited(12*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.ProtocolError, failed: true, cause: "-32602 unsupported protocolVersion", reason: "handshake refused"},
		{name: "the dual-era fallback is no refusal", evs: []rec{{0, phases.SpawnRequested, nil, ""}, {ms, phases.Spawned, nil, ""},
			{2 * ms, phases.DiscoverReceived, nil, ""}, {3 * ms, phases.DiscoverFailed, []ledger.Field{f("code", -32601), f("message", "method not found")}, ""},
			{4 * ms, phases.InitializeReceived, nil, ""}, {5 * ms, phases.InitializeResponded, nil, ""}, left(time.Second), exited(time.Second, 0, f("requested_by_shim", true))},
			outcome: verdict.Ended},
		{name: "the dual-era fallback, the -32601 after the initialize was sent: a slow legacy server is a timeout", evs: []rec{{0, phases.SpawnRequested, nil, ""}, {ms, phases.Spawned, nil, ""},
			{2 * ms, phases.DiscoverReceived, nil, ""}, {250 * ms, phases.InitializeReceived, nil, ""},
			{900 * ms, phases.DiscoverFailed, []ledger.Field{f("code", -32601), f("message", "method not found")}, ""},
			{time.Second, phases.HandshakeTimeout, []ledger.Field{f("last_event", "initialize_received_no_response"), f("timeout_ms", 1000.0), f("waiting", "initialize")}, ""},
			exited(time.Second, -1, f("signal", "SIGKILL"), f("requested_by_shim", true))},
			outcome: verdict.Timeout, failed: true, reason: "no answer to initialize within 1s", not: "-32601"},
		{name: "a banner the client skipped", evs: launch(rec{2 * ms, phases.StdoutNoise, []ledger.Field{f("preview", "Starting Acme MCP server")}, ""},
			rec{10 * ms, phases.InitializeResponded, nil, ""}, rec{11 * ms, phases.InitializedReceived, nil, ""},
			rec{20 * ms, phases.ToolsListResponded, []ledger.Field{f("tool_count", 2)}, ""}, left(time.Second), exited(time.Second, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "warning: stdout noise before the handshake", advice: "a stricter client fails on it",
			answer: "answered initialize"},
		{name: "a banner the client did not get past", evs: launch(rec{2 * ms, phases.StdoutNoise, []ledger.Field{f("preview", "Starting Acme MCP server")}, ""},
			left(20*ms), exited(22*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.ProtocolError, failed: true, reason: `stdout noise before the handshake: "Starting Acme MCP server"`},
		{name: "a crash after the handshake", evs: listed(2, rec{30 * ms, phases.ToolCallReceived, nil, ""},
			exited(40*ms, 1, f("stderr_tail", []string{"fatal: crashed while answering tools/call 2"}), f("handshake", true))),
			outcome: verdict.Crashed, failed: true, cause: "fatal: crashed while answering tools/call 2", reason: "after the handshake"},
		{name: "killed from outside after its banner: the banner is no cause", evs: listed(2, exited(40*ms, -1, f("signal", "SIGKILL"),
			f("stderr_tail", []string{"Secure MCP Filesystem Server running on stdio"}))),
			outcome: verdict.Crashed, failed: true, reason: "killed by SIGKILL, ", not: "running on stdio"},
		{name: "a crash loop given up", evs: listed(2, exited(40*ms, 1, f("stderr_tail", []string{"panic: boom"})),
			rec{41 * ms, phases.RestartsExhausted, []ledger.Field{f("attempts", 5)}, ""}),
			outcome: verdict.Crashed, failed: true, cause: "panic: boom", advice: "gave up after 5 restarts"},
		{name: "the shim killed a restarted server that did not answer the replayed initialize", evs: []rec{
			{0, phases.SpawnRequested, []ledger.Field{f("generation", 2)}, ""}, {2 * ms, phases.Spawned, nil, ""},
			{10 * time.Second, phases.ReplayFailed, []ledger.Field{f("error", "initialize: no answer within 10s"), f("method", "initialize"), f("timeout_ms", 10000.0)}, ""},
			{10 * time.Second, phases.KillRequested, []ledger.Field{f("signal", "SIGKILL"), f("reason", "the restarted server did not take the session back")}, ""},
			exited(10*time.Second+ms, -1, f("signal", "SIGKILL"), f("requested_by_shim", true))},
			outcome: verdict.Timeout, failed: true, reason: "restarted, no answer to the replayed initialize within 10s; mcpshim stopped it (killed by SIGKILL); stderr silent",
			advice: "restarted server", not: "before any request reached it", answer: "no answer to the replayed initialize"},
		{name: "a restarted server refused the replayed initialize", evs: []rec{
			{0, phases.SpawnRequested, []ledger.Field{f("generation", 2)}, ""}, {2 * ms, phases.Spawned, nil, ""},
			{5 * ms, phases.ReplayFailed, []ledger.Field{f("error", "initialize refused: -32602 unsupported"), f("method", "initialize")}, ""},
			{5 * ms, phases.KillRequested, []ledger.Field{f("signal", "SIGKILL")}, ""},
			exited(6*ms, -1, f("signal", "SIGKILL"), f("requested_by_shim", true))},
			outcome: verdict.ProtocolError, failed: true, cause: "initialize refused: -32602 unsupported", reason: "restarted, the replayed handshake failed",
			not: "a kill from outside"},
		{name: "a restarted server that died during the replay", evs: []rec{
			{0, phases.SpawnRequested, []ledger.Field{f("generation", 2)}, ""}, {2 * ms, phases.Spawned, nil, ""},
			{5 * ms, phases.ReplayFailed, []ledger.Field{f("error", "initialize: the server exited before answering"), f("method", "initialize")}, ""},
			exited(6*ms, 1, f("stderr_tail", []string{"fatal: no config"}))},
			outcome: verdict.Exited, failed: true, cause: "fatal: no config", reason: "exit 1 before answering the handshake the shim replayed"},
		{name: "a tools/list never answered, the client waited 2s", evs: handshake(rec{20 * ms, phases.ToolsListReceived, []ledger.Field{f("request_id", "2")}, ""},
			left(2020*ms), exited(2030*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Timeout, failed: true, reason: "no answer to tools/list within 2s, when the client left", advice: "then never answered tools/list",
			not: "never asked"},
		{name: "a tools/list the client left 200ms after", evs: handshake(rec{20 * ms, phases.ToolsListReceived, []ledger.Field{f("request_id", "2")}, ""},
			left(220*ms), exited(230*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left", not: "never asked"},
		{name: "an unasked protocol version no revision has, the client went no further", evs: launch(
			rec{10 * ms, phases.InitializeResponded, []ledger.Field{f("request_id", "1"), f("protocol_version", "1999-01-01")}, ""},
			left(20*ms), exited(30*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.ProtocolError, failed: true, cause: "protocolVersion 1999-01-01, which no MCP revision has, answered to the client's 2025-11-25",
			reason: "unusable handshake answer: protocolVersion 1999-01-01", advice: "align the protocol version", answer: "unusable handshake answer"},
		{name: "modern: supportedVersions no revision has", evs: []rec{
			{0, phases.SpawnRequested, nil, ""}, {2 * ms, phases.Spawned, nil, ""},
			{3 * ms, phases.DiscoverReceived, []ledger.Field{f("request_id", "1"), f("protocol_version", "2026-07-28")}, ""},
			{10 * ms, phases.DiscoverResponded, []ledger.Field{f("request_id", "1"), f("supported_versions", []string{"1999-01-01"})}, ""},
			left(20 * ms), exited(30*ms, 0, f("requested_by_shim", true))},
			outcome: verdict.ProtocolError, failed: true, reason: "unusable handshake answer: supportedVersions 1999-01-01"},
		{name: "another revision than asked is a handshake", evs: launch(
			rec{10 * ms, phases.InitializeResponded, []ledger.Field{f("request_id", "1"), f("protocol_version", "2024-11-05")}, ""},
			left(20*ms), exited(30*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "an unknown version the client went on with is a handshake", evs: launch(
			rec{10 * ms, phases.InitializeResponded, []ledger.Field{f("request_id", "1"), f("protocol_version", "1999-01-01")}, ""},
			rec{11 * ms, phases.InitializedReceived, nil, ""}, left(20*ms), exited(30*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "a tools/call never answered, the client waited 2s", evs: listed(1, rec{30 * ms, phases.ToolCallReceived, []ledger.Field{f("request_id", "3"), f("tool", "echo")}, ""},
			left(2030*ms), rec{2031 * ms, phases.PendingFailed, []ledger.Field{f("request_id", "3"), f("method", "tools/call"), f("tool", "echo")}, ""},
			exited(2040*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Timeout, failed: true, reason: "no answer to tools/call within 2s, when the client left", advice: "then never answered tools/call"},
		{name: "a tools/call the client cancelled", evs: listed(1, rec{30 * ms, phases.ToolCallReceived, []ledger.Field{f("request_id", "3"), f("tool", "echo")}, ""},
			rec{1500 * ms, phases.RequestCancelled, []ledger.Field{f("request_id", "3"), f("method", "tools/call")}, ""},
			left(2030*ms), exited(2040*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "a tools/call held while the server waits on the client", evs: listed(1, rec{30 * ms, phases.ToolCallReceived, []ledger.Field{f("request_id", "3"), f("tool", "echo")}, ""},
			rec{40 * ms, phases.RequestReceived, []ledger.Field{f("request_id", `"s-1"`), f("method", "sampling/createMessage"), f("direction", "server")}, ""},
			left(2030*ms), exited(2040*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "a tools/call the client left 200ms after", evs: listed(1, rec{30 * ms, phases.ToolCallReceived, []ledger.Field{f("request_id", "3"), f("tool", "echo")}, ""},
			left(230*ms), exited(240*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "a tools/list answered with an error", evs: handshake(rec{20 * ms, phases.ToolsListReceived, []ledger.Field{f("request_id", "2")}, ""},
			rec{25 * ms, phases.ToolsListFailed, []ledger.Field{f("request_id", "2"), f("code", -32603), f("message", "backend down")}, ""},
			left(30*ms), exited(35*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.ProtocolError, failed: true, cause: "-32603 backend down", reason: "tools/list failed: -32603 backend down"},
		{name: "the OOM killer after the handshake", evs: listed(2, exited(40*ms, -1, f("signal", "SIGKILL"), f("oom_kills", 1), f("oom_file", "/sys/fs/cgroup/x/memory.events"))),
			outcome: verdict.Crashed, failed: true,
			reason: "killed by SIGKILL, not sent by the shim, 30ms after the handshake; its memory cgroup counted 1 OOM kill meanwhile (/sys/fs/cgroup/x/memory.events)",
			advice: "the OOM killer ended it", not: "fix what it says"},
		{name: "SIGTERM from outside before the handshake", evs: launch(exited(40*ms, -1, f("signal", "SIGTERM"), f("oom_unreadable", "no cgroup OOM count on this system"))),
			outcome: verdict.Exited, failed: true,
			reason: "killed by SIGTERM, not sent by the shim, before answering the handshake; OOM kills unreadable: no cgroup OOM count on this system",
			advice: "something outside the shim sent it SIGTERM", not: "fix what it says"},
		{name: "zero tools", evs: listed(0, left(time.Second), exited(time.Second, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "zero tools listed", advice: "credential or permission"},
		{name: "a lock broken under enforce", evs: listed(0, rec{21 * ms, phases.ToolsMissing, []ledger.Field{f("missing", []string{"fetch"}), f("mode", "enforce")}, ""},
			kill(25*ms), exited(30*ms, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, failed: true, reason: "locked tools missing (enforce): fetch", advice: "re-lock"},
		{name: "a lock broken under warn", evs: listed(1, rec{21 * ms, phases.ToolsMissing, []ledger.Field{f("missing", []string{"fetch"}), f("mode", "warn")}, ""},
			left(time.Second), exited(time.Second, 0, f("requested_by_shim", true))),
			outcome: verdict.Ended, reason: "locked tools missing (warn): fetch"},
		{name: "remote: 401 at initialize", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 401),
			rec{5 * ms, phases.AuthFailed, []ledger.Field{f("status", 401), f("www_authenticate", `Bearer realm="mcp"`)}, ""},
			left(10*ms), rec{12 * ms, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.AuthRequired, failed: true, cause: `HTTP 401 Unauthorized at initialize; WWW-Authenticate: Bearer realm="mcp"`,
			not: "exit 0"},
		{name: "remote: signed in after a 401", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 401),
			rec{5 * ms, phases.AuthRequired, []ledger.Field{f("status", 401)}, ""},
			rec{6 * ms, phases.AuthorizationStarted, []ledger.Field{f("issuer", "https://auth.example.com")}, ""},
			rec{900 * ms, phases.Authorized, []ledger.Field{f("issuer", "https://auth.example.com")}, ""}, exchange(901*ms, "initialize", 200),
			rec{902 * ms, phases.InitializeResponded, nil, ""}, left(time.Second), rec{time.Second, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "remote: a refresh refused, then signed in again", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""},
			rec{3 * ms, phases.AuthFailed, []ledger.Field{f("stage", "refresh"), f("error", "invalid_grant"), f("message", "the authorization server refused the stored refresh token")}, ""},
			exchange(5*ms, "initialize", 401), rec{900 * ms, phases.Authorized, nil, ""}, exchange(901*ms, "initialize", 200),
			rec{902 * ms, phases.InitializeResponded, nil, ""}, left(time.Second), rec{time.Second, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "remote: signing in stopped at the browser", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 401),
			rec{5 * ms, phases.AuthRequired, []ledger.Field{f("status", 401)}, ""}, rec{6 * ms, phases.AuthorizationStarted, nil, ""},
			rec{25 * time.Second, phases.AuthFailed, []ledger.Field{f("status", 401), f("stage", "authorization"),
				f("message", "no answer from the browser within 5m0s: open the URL printed above, or run mcpshim auth login --url https://mcp.example.com/mcp")}, ""},
			left(26*time.Second), rec{26 * time.Second, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.AuthRequired, failed: true, cause: "signing in stopped at the authorization step: no answer from the browser within 5m0s",
			advice: "mcpshim auth login --url"},
		{name: "remote: the server's metadata names another resource", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 401),
			rec{6 * ms, phases.AuthFailed, []ledger.Field{f("status", 401), f("stage", "resource_metadata"),
				f("message", "the protected resource metadata at http://x/.well-known/oauth-protected-resource/mcp: its resource https://evil.example.com/mcp is not this server")}, ""},
			left(10*ms), rec{12 * ms, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.AuthRequired, failed: true, reason: "signing in stopped at the server's resource metadata: the protected resource metadata at http://x/.well-known/oauth-protected-resource/mcp: its resource https://evil.example.com/mcp is not this server",
			advice: "the server's operator"},
		{name: "remote: refused", evs: []rec{{0, phases.ConnectFailed, []ledger.Field{f("url", "http://127.0.0.1:9/mcp"), f("error_class", "refused"), f("error", "connection refused")}, ""},
			{ms, phases.ReconnectsExhausted, []ledger.Field{f("failures", 3)}, ""}},
			outcome: verdict.Unreachable, failed: true, cause: "connection refused", advice: "gave up after 3 failures", not: "exit 69"},
		{name: "remote: 503 until the bridge gave up", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 503),
			rec{600 * ms, phases.Disconnected, []ledger.Field{f("reason", "unreachable: HTTP 503 Service Unavailable"), f("exit_code", 69)}, ""}),
			outcome: verdict.Unreachable, failed: true, cause: "HTTP 503 Service Unavailable at initialize", not: "exit 69"},
		{name: "remote: the handshake redirected to another origin", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 307),
			rec{5 * ms, phases.RedirectRefused, []ledger.Field{f("status", 307), f("location", "http://127.0.0.1:8/mcp?code=[REDACTED]"), f("method", "initialize")}, ""},
			left(10*ms), rec{12 * ms, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.Unreachable, failed: true, cause: "redirected: HTTP 307 Temporary Redirect to http://127.0.0.1:8/mcp?code=[REDACTED]",
			reason: "not followed", advice: "put it in --url", answer: "redirected the handshake (HTTP 307 Temporary Redirect to http://127.0.0.1:8/mcp?code=[REDACTED]); not followed",
			connect: "connected to http://127.0.0.1:9/mcp (127.0.0.1:9); the server then redirected the handshake (HTTP 307 Temporary Redirect to http://127.0.0.1:8/mcp?code=[REDACTED]), which was not followed"},
		{name: "remote: down, paged, still retrying (seed 004: a page is not an exit)", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""},
			exchange(5*ms, "initialize", 200), rec{5 * ms, phases.InitializeResponded, nil, ""}, exchange(time.Second, "tools/call", 503),
			rec{time.Second, phases.ReconnectScheduled, []ledger.Field{f("failures", 1), f("delay_ms", 500)}, ""},
			rec{2 * time.Second, phases.ReconnectScheduled, []ledger.Field{f("failures", 3), f("delay_ms", 2000)}, ""},
			rec{2 * time.Second, phases.OutagePaged, []ledger.Field{f("failures", 3)}, ""},
			rec{2*time.Second + ms, phases.Disconnected, []ledger.Field{f("reason", "unreachable: HTTP 503 Service Unavailable"), f("exit_code", 69)}, ""}),
			outcome: verdict.Unreachable, failed: true, cause: "HTTP 503 Service Unavailable at tools/call", advice: "keeps retrying", not: "gave up",
			connect: "; an outage: paged after 3 consecutive failures, the bridge keeps retrying"},
		{name: "remote: healthy", evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""}, exchange(5*ms, "initialize", 200),
			rec{5 * ms, phases.InitializeResponded, nil, ""}, left(time.Second), rec{time.Second, phases.Disconnected, []ledger.Field{f("reason", "stdin_eof")}, ""}),
			outcome: verdict.Ended, reason: "the client left"},
		{name: "remote: a live session (its shim's pid answers)", alive: true, evs: remote(rec{2 * ms, phases.InitializeReceived, nil, ""},
			exchange(5*ms, "initialize", 200), rec{5 * ms, phases.InitializeResponded, nil, ""}),
			outcome: verdict.Ready, reason: "handshake done"},
		{name: "probe: a wedged server killed at the deadline: its stderr was active, not silent", origin: phases.OriginProbe,
			evs: launch(rec{1500 * ms, phases.HandshakeTimeout, []ledger.Field{f("last_event", "initialize_received_no_response"), f("waiting", "initialize"), f("timeout_ms", 1500.0)}, ""},
				exited(1501*ms, -1, f("signal", "SIGKILL"), f("requested_by_shim", true), f("stderr_tail", []string{"fatal_error=Cannot read properties of undefined"}))),
			outcome: verdict.Timeout, failed: true, cause: "fatal_error=Cannot read properties of undefined", reason: "; stderr: fatal_error=", not: "silent"},
		{name: "probe: ready", origin: phases.OriginProbe, evs: listed(2, exited(30*ms, -1, f("signal", "SIGKILL"), f("requested_by_shim", true))),
			outcome: verdict.Ready, reason: "2 tools"},
		{name: "probe: node crash at start", origin: phases.OriginProbe, evs: launch(exited(30*ms, 1, f("stderr_tail", node20Crash))),
			outcome: verdict.Exited, failed: true, cause: "Error: WEATHER_API_KEY is not set", not: "Node.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := entries(t, tt.origin, tt.evs)
			v := judge(es, tt.alive)
			if v.Outcome != tt.outcome || v.Failed != tt.failed {
				t.Errorf("got %s failed=%v, want %s failed=%v; reason %q", v.Outcome, v.Failed, tt.outcome, tt.failed, v.Reason)
			}
			if tt.cause != "" && v.Cause != tt.cause {
				t.Errorf("cause: got %q, want %q", v.Cause, tt.cause)
			}
			if !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("reason: got %q, want it to say %q", v.Reason, tt.reason)
			}
			if tt.advice == "-" && v.Advice != "" || tt.advice != "-" && !strings.Contains(v.Advice, tt.advice) {
				t.Errorf("advice: got %q, want %q", v.Advice, tt.advice)
			}
			all := v.Reason + " " + v.Advice
			for _, a := range v.Answers {
				all += " " + a.Reason
			}
			if tt.not != "" && strings.Contains(strings.ToLower(all), strings.ToLower(tt.not)) {
				t.Errorf("the verdict says %q: %s", tt.not, all)
			}
			if len(v.Answers) != 4 || !strings.Contains(v.Answers[1].Reason, tt.answer) {
				t.Errorf("initialized answer: got %+v, want it to say %q", v.Answers, tt.answer)
			}
			if !strings.Contains(v.Answers[0].Reason, tt.connect) {
				t.Errorf("launched answer: got %q, want it to say %q", v.Answers[0].Reason, tt.connect)
			}
			for _, a := range v.Answers {
				if a.Evidence != nil && a.Evidence.Find(es) == nil {
					t.Errorf("answer %s: evidence %+v is not one of the run's records", a.Key, a.Evidence)
				}
			}
			checkOrderFree(t, es, tt.alive, v)
			checkSealed(t, es, tt.alive, v)
			checkSaved(t, es, tt.alive, v)
		})
	}
}

// checkOrderFree: the same records in any order give the same verdict.
func checkOrderFree(t *testing.T, es []ledger.Entry, alive bool, want verdict.Verdict) {
	t.Helper()
	for i := range 5 {
		shuffled := append([]ledger.Entry(nil), es...)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got := judge(shuffled, alive)
		if got.Outcome != want.Outcome || got.Reason != want.Reason || got.Cause != want.Cause || got.Advice != want.Advice {
			t.Fatalf("shuffled: got %s %q %q, want %s %q %q", got.Outcome, got.Reason, got.Advice, want.Outcome, want.Reason, want.Advice)
		}
	}
}

// checkSaved: a fold saved as JSON and read back (the OTLP export keeps its
// folds between invocations) gives the same verdict, and so does one that
// was saved halfway and went on.
func checkSaved(t *testing.T, es []ledger.Entry, alive bool, want verdict.Verdict) {
	t.Helper()
	var fold verdict.Fold
	for i := range es {
		fold.Add(&es[i])
		if i == len(es)/2 {
			b, err := json.Marshal(&fold)
			if err != nil {
				t.Fatal(err)
			}
			fold = verdict.Fold{}
			if err := json.Unmarshal(b, &fold); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := verdict.Judge(&fold, ledgertest.T0.Add(time.Hour), alive)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from a saved fold: got %+v, want %+v", got, want)
	}
}

// checkSealed: a reader that stops at the end record says the same outcome,
// cause and reason (only advice may come from later records).
func checkSealed(t *testing.T, es []ledger.Entry, alive bool, want verdict.Verdict) {
	t.Helper()
	for i := range es {
		if verdict.Ends(es[i].Event) {
			got := judge(es[:i+1], alive)
			if got.Outcome != want.Outcome || got.Failed != want.Failed || got.Reason != want.Reason || got.Cause != want.Cause {
				t.Fatalf("judged at its end record: got %s %v %q %q, want %s %v %q %q", got.Outcome, got.Failed, got.Reason, got.Cause,
					want.Outcome, want.Failed, want.Reason, want.Cause)
			}
			return
		}
	}
}
