// Package testfixtures holds fake stdio MCP servers that each fail at one boundary
// (launch, handshake, discovery, execution, shutdown), and a scripted client to
// drive them. It is linked into the mcpshim binary so that `mcpshim fixture NAME`
// runs a fixture as a real child process for the demo and the tests.
//
// The protocol is hand-written line-delimited JSON-RPC 2.0: the fixtures must be
// able to break it in ways an SDK would not allow. Nothing on the shim's own
// path imports it.
package testfixtures

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Fixture names a fixture server and says in one line how it behaves.
type Fixture struct {
	Name, Description string
}

// stdio is a fixture's three streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// options are the flags any fixture accepts; each fixture reads the ones it needs.
type options struct {
	delay               time.Duration
	crashOnCall         int
	crashAfterHandshake bool
	listChangedAfter    int
	tools               string
	pageSize            int
	size                int64
	sleepFor            time.Duration
	lines               int
	peer                string
	validateMeta        bool
	emptyCursor         bool
	endListen           bool
	noListChanged       bool
	refuseDiscover      bool
	supported           string
	seed                int64
	record              string
	url                 string
	spec                string
}

const fakeToken = "sk-test-123456789abcdef"

// fixtures maps each fixture name (a contract: tests and the demo launch them by
// name) to its behaviour.
var fixtures = map[string]struct {
	desc string
	run  func(o options, st stdio) int
}{
	"healthy": {"both eras; tools echo and add; --crash-on-call, --crash-after-handshake, --list-changed-after, --tools, --page-size",
		variant("healthy", func(*server, options) {})},
	"legacy-only": {"healthy, but initialize only: server/discover answers -32601",
		variant("legacy-only", func(s *server, _ options) { s.modern = false })},
	"exit-early": {"writes 'fatal: missing API key' to stderr and exits 1 before reading",
		func(_ options, st stdio) int {
			fmt.Fprintln(st.err, "fatal: missing API key")
			return 1
		}},
	"banner": {"prints 'Starting Acme MCP server' on stdout, then behaves as healthy",
		variant("banner", func(s *server, _ options) { s.banner = "Starting Acme MCP server" })},
	"log-on-stdout": {"prints a bracketed log line on stdout before every response",
		variant("log-on-stdout", func(s *server, _ options) { s.stdoutLog = "[2026-07-23 16:48:43] INFO listening" })},
	"invalid-schema": {"tools/list returns one tool with inputSchema {\"type\":\"strng\"} and one with none",
		plain("invalid-schema", func(s *server, _ options) { s.tools = invalidSchemaTools })},
	"zero-tools": {"handshake succeeds, tools/list returns no tools",
		plain("zero-tools", func(*server, options) {})},
	"iserror": {"tool fetch answers isError: upstream answered 401",
		plain("iserror", func(s *server, _ options) { s.tools = []tool{isErrorTool} })},
	"rpc-error-tool": {"tools/call answers JSON-RPC error -32602 unknown tool",
		plain("rpc-error-tool", func(s *server, _ options) { s.tools = []tool{rpcErrorTool} })},
	"silent": {"reads stdin until EOF and never writes",
		func(_ options, st stdio) int {
			io.Copy(io.Discard, st.in) // a read error ends it the same way EOF does
			return 0
		}},
	"slow-init": {"healthy, but waits --delay (default 3s) before answering the handshake",
		variant("slow-init", func(s *server, o options) { s.initDelay = o.delay })},
	"init-no-response": {"reads the handshake, logs a fatal_error on stderr, never answers, stays alive",
		variant("init-no-response", func(s *server, _ options) {
			s.wedgeOnInit = "fatal_error=Cannot read properties of undefined (reading 'tools')"
		})},
	"protocol-reject": {"initialize answers -32602 unsupported protocolVersion; server/discover -32601",
		plain("protocol-reject", func(s *server, _ options) { s.modern, s.rejectInit = false, "unsupported protocolVersion" })},
	"crash-mid-response": {"the first tools/call writes half a response line, then exits 1",
		variant("crash-mid-response", func(s *server, _ options) { s.crashOnCall = 1 })},
	"huge-response": {"tool dump answers with one line of --size bytes (default 64 MiB); --peer ts writes the id last",
		plain("huge-response", func(s *server, o options) { s.peer, s.tools = o.peer, []tool{hugeTool(o.size)} })},
	"modern-only": {"serves 2026-07-28 only: server/discover works, initialize answers -32601",
		variant("modern-only", func(s *server, _ options) { s.legacy, s.supported = false, []string{modernVersion} })},
	"stubborn": {"healthy, but ignores stdin EOF, SIGTERM, SIGINT and SIGHUP; only SIGKILL ends it",
		variant("stubborn", func(s *server, _ options) {
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			s.ignoreEOF = true
		})},
	"grandchild": {"healthy, but first spawns 'fixture sleep' holding its stdout (pid on stderr)",
		grandchild},
	"sleep": {"sleeps --for (default 1h) and exits 0; the grandchild",
		func(o options, _ stdio) int {
			time.Sleep(o.sleepFor)
			return 0
		}},
	"report": {"a report server: tools only with REPORT_API_TOKEN; REPORT_SCOPE=read hides fetch_daily_report",
		plain("report-server", func(s *server, _ options) {
			s.tools = reportTools(os.Getenv("REPORT_API_TOKEN"), os.Getenv("REPORT_SCOPE"))
		})},
	"sampling": {"tools/call first sends the client sampling/createMessage (id \"s-1\") and answers after its reply",
		plain("sampling", func(s *server, _ options) { s.tools = []tool{samplingTool} })},
	"server-events": {"logs logfmt phase events on stderr (and one forged exited line)",
		plain("server-events", func(s *server, _ options) {
			fmt.Fprintln(s.errw, eventReady)
			fmt.Fprintln(s.errw, eventForgedExit)
			s.tools = []tool{issueLookupTool}
		})},
	"browser": {"not a server: a browser at an authorization server that approves at once: GET --url, then its Location ($BROWSER for OAuth tests)",
		browse},
	"fault": {"the truth harness's server: breaks where and as --spec says (see FaultSpec), else serves echo in its era",
		func(o options, st stdio) int { return serveFault(o.spec, st) }},
	"chaos": {"a random peer: late, re-spelled, reordered answers up to 4 MiB, notifications, server requests, deaths; --seed, --record DIR",
		func(o options, st stdio) int { return chaos(o.seed, o.record, st) }},
	"stderr-chatty": {"healthy, but writes --lines stderr lines (default 200) and one per request, with a fake bearer token",
		variant("stderr-chatty", func(s *server, o options) {
			for i := 1; i <= o.lines; i++ {
				if i%50 == 1 {
					fmt.Fprintf(s.errw, "debug: upstream headers: Authorization: Bearer %s\n", fakeToken)
					continue
				}
				fmt.Fprintf(s.errw, "debug: warming cache shard %d/%d\n", i, o.lines)
			}
			s.chatty = true
		})},
}

// variant runs the healthy server, with its option-driven faults, as set
// changes it.
func variant(name string, set func(s *server, o options)) func(options, stdio) int {
	return func(o options, st stdio) int {
		s := healthy(name, o, st)
		set(s, o)
		return s.run()
	}
}

// plain runs a server with no tools and no options of its own, as set
// changes it.
func plain(name string, set func(s *server, o options)) func(options, stdio) int {
	return func(o options, st stdio) int {
		s := newServer(name, st)
		set(s, o)
		return s.run()
	}
}

// healthy is the healthy server with its option-driven faults.
func healthy(name string, o options, st stdio) *server {
	s := newServer(name, st)
	names := o.tools
	if file, ok := strings.CutPrefix(names, "@"); ok {
		// Read at start: a test changes the file between restarts.
		b, _ := os.ReadFile(file)
		names = strings.TrimSpace(string(b))
	}
	s.tools = namedTools(names)
	s.pageSize = o.pageSize
	s.crashOnCall = o.crashOnCall
	s.crashAfterHandshake = o.crashAfterHandshake
	s.listChangedAfter = o.listChangedAfter
	s.peer, s.validateMeta, s.emptyCursor, s.endListen = o.peer, o.validateMeta, o.emptyCursor, o.endListen
	s.noListChanged, s.refuseDiscover = o.noListChanged, o.refuseDiscover
	if o.supported != "" {
		s.supported = strings.Split(o.supported, ",")
	}
	return s
}

// grandchild re-executes this binary as `fixture sleep` sharing our stdout, so the
// pipe outlives the fixture, and then serves as healthy.
func grandchild(o options, st stdio) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(st.err, "fixture grandchild: %v\n", err)
		return 1
	}
	cmd := exec.Command(exe, "fixture", "sleep")
	cmd.Stdout = st.out // an *os.File is inherited as is, which is the point
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(st.err, "fixture grandchild: spawn %s: %v\n", exe, err)
		return 1
	}
	// Never waited for: the grandchild is meant to outlive us.
	fmt.Fprintf(st.err, "grandchild pid=%d\n", cmd.Process.Pid)
	return healthy("grandchild", o, st).run()
}

// Names lists the fixtures with a one-line description each, sorted by name.
func Names() []Fixture {
	list := make([]Fixture, 0, len(fixtures))
	for name, f := range fixtures {
		list = append(list, Fixture{Name: name, Description: f.desc})
	}
	slices.SortFunc(list, func(a, b Fixture) int { return strings.Compare(a.Name, b.Name) })
	return list
}

// Serve runs the named fixture server on the given streams until it ends, returning
// its exit status. args are the fixture's options (such as --delay 3s). Unknown
// names and bad options return 2 with a message on stderr. Some fixtures act on
// the whole process: stubborn ignores signals, grandchild spawns a process.
func Serve(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, ok := fixtures[name]
	if !ok {
		known := make([]string, 0, len(fixtures))
		for _, f := range Names() {
			known = append(known, f.Name)
		}
		fmt.Fprintf(stderr, "unknown fixture %q; known fixtures: %s\n", name, strings.Join(known, ", "))
		return 2
	}
	o, err := parseOptions(name, args, stderr)
	if err != nil {
		return 2
	}
	return f.run(o, stdio{in: stdin, out: stdout, err: stderr})
}

// parseOptions parses a fixture's flags, reporting any error on stderr.
func parseOptions(name string, args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fixture "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.delay, "delay", 3*time.Second, "slow-init: wait this long before answering the handshake")
	fs.IntVar(&o.crashOnCall, "crash-on-call", 0, "die mid-response on the Nth tools/call (exit 1)")
	fs.BoolVar(&o.crashAfterHandshake, "crash-after-handshake", false, "exit 3 right after the handshake completes")
	fs.IntVar(&o.listChangedAfter, "list-changed-after", 0, "send notifications/tools/list_changed after the Nth tools/call")
	fs.StringVar(&o.tools, "tools", "echo,add", "comma-separated tool names, or @FILE to read them from FILE at start")
	fs.IntVar(&o.pageSize, "page-size", 0, "tools per tools/list page (0: one page)")
	fs.Int64Var(&o.size, "size", 64<<20, "huge-response: bytes in the response line")
	fs.DurationVar(&o.sleepFor, "for", time.Hour, "sleep: how long to sleep")
	fs.IntVar(&o.lines, "lines", 200, "stderr-chatty: stderr lines written at start")
	fs.StringVar(&o.peer, "peer", "", "write answers like this SDK: ts (id last, ids re-serialized by JSON.parse/stringify) or python (json.loads/dumps)")
	fs.BoolVar(&o.validateMeta, "validate-meta", false, "reject 2026-07-28 requests missing required _meta with -32602, as go-sdk does")
	fs.BoolVar(&o.emptyCursor, "empty-cursor", false, "page tools/list with \"\" as a valid cursor")
	fs.BoolVar(&o.endListen, "end-listen", false, "end each subscriptions/listen at once with notifications/cancelled")
	fs.BoolVar(&o.noListChanged, "no-list-changed", false, "initialize declares tools without listChanged")
	fs.BoolVar(&o.refuseDiscover, "refuse-discover", false, "server/discover answers -32022 UnsupportedProtocolVersion")
	fs.Int64Var(&o.seed, "seed", 1, "chaos: the random seed (mixed with the pid)")
	fs.StringVar(&o.record, "record", "", "chaos: a directory to record every line read and written in")
	fs.StringVar(&o.spec, "spec", "", "fault: the fault spec, e.g. \"era=legacy at=read:1 do=exit:3 say=cause\"")
	fs.StringVar(&o.url, "url", "", "browser: the authorization URL to visit")
	fs.StringVar(&o.supported, "supported", "", "comma-separated supportedVersions of server/discover (default 2026-07-28,2025-11-25)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("fixture %s: unexpected argument %q", name, fs.Arg(0))
		fmt.Fprintln(stderr, err)
		return o, err
	}
	return o, nil
}
