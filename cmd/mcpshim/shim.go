package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/jsonrpc"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/otelexport"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/remote"
	"github.com/mcpshim-dev/mcpshim/supervisor"
	"github.com/mcpshim-dev/mcpshim/tap"
	"github.com/mcpshim-dev/mcpshim/verdict"
	"github.com/mcpshim-dev/mcpshim/witness"
)

// shimFlags are the flags of `mcpshim [flags] -- COMMAND [ARG...]`.
type shimFlags struct {
	name             string
	ledger           string
	ledgerMaxSize    int64
	handshakeTimeout time.Duration
	capture          string
	divertNoise      bool
	logFormat        string
	quiet            bool
	color            colorFlag
	maxObserve       int
	killGrace        time.Duration
	restart          string
	backoff          time.Duration
	backoffMax       time.Duration
	maxRestarts      int
	restartWindow    time.Duration
	stableAfter      time.Duration
	permafail        string
	egressWitness    bool
	egressDeny       hostList
	lock             string
	lockMode         string
	otlp             otlpFlags
	remote           remoteFlags
}

func (f *shimFlags) register(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&f.name, "name", c.getenv("MCPSHIM_NAME"), "the server's label in the ledger and events (env MCPSHIM_NAME; default: derived from the command)")
	fs.StringVar(&f.ledger, "ledger", c.getenv("MCPSHIM_LEDGER"), "the ledger file, JSON lines (env MCPSHIM_LEDGER; default $XDG_STATE_HOME/mcpshim/NAME.jsonl); a directory puts NAME.jsonl in it; \"off\" disables it")
	fs.Int64Var(&f.ledgerMaxSize, "ledger-max-size", ledger.DefaultMaxSize, "rotate the ledger file past this many bytes (at least 4096)")
	fs.DurationVar(&f.handshakeTimeout, "handshake-timeout", 30*time.Second, "record handshake_timeout when no handshake completes in time (it observes; it does not kill); 0 turns it off, at most 24h")
	fs.StringVar(&f.capture, "capture", c.envOr("MCPSHIM_CAPTURE", "meta"), "meta: methods, ids, tool names, sizes, digests, timings; full: also redacted bodies (env MCPSHIM_CAPTURE)")
	fs.BoolVar(&f.divertNoise, "divert-noise", false, "send non-JSON lines of the server's stdout to stderr instead of the client")
	fs.StringVar(&f.logFormat, "log-format", c.envOr("MCPSHIM_LOG_FORMAT", "text"), "shim events on stderr: text or json (env MCPSHIM_LOG_FORMAT)")
	fs.BoolVar(&f.quiet, "quiet", false, "no shim events on stderr (the server's stderr still flows)")
	f.color.register(fs, c)
	fs.IntVar(&f.maxObserve, "max-observe", jsonrpc.DefaultMaxObserve, "bytes of one line the tap looks at, 65536 to 1073741824; longer lines are relayed whole and marked truncated")
	fs.DurationVar(&f.killGrace, "kill-grace", 2*time.Second, "after the client leaves: close stdin, wait this long, SIGTERM the group, wait again, SIGKILL (0 to 1h)")
	p := supervisor.DefaultPolicy()
	fs.StringVar(&f.restart, "restart", "on-failure", "restart the server: on-failure, always or never")
	fs.DurationVar(&f.backoff, "backoff", p.Backoff, "delay before the second restart, doubling after (the first is immediate); 0 to --backoff-max")
	fs.DurationVar(&f.backoffMax, "backoff-max", p.BackoffMax, "the longest delay between restarts, at most 24h")
	fs.IntVar(&f.maxRestarts, "max-restarts", p.MaxRestarts, "give up after this many restarts within --restart-window (0 to 1000000)")
	fs.DurationVar(&f.restartWindow, "restart-window", p.Window, "the window --max-restarts counts in, more than 0")
	fs.DurationVar(&f.stableAfter, "stable-after", p.StableAfter, "a run up this long after its handshake resets the restart count (0 or more)")
	fs.StringVar(&f.permafail, "permafail-codes", "78 126 127", "exit codes never restarted")
	fs.StringVar(&f.lock, "lock", "", "a tool-surface lock (mcpshim lock) to check each complete tools/list against")
	fs.StringVar(&f.lockMode, "lock-mode", "warn", "warn: record and print missing locked tools; enforce: also fail the server for the client and exit 78")
	f.otlp.register(fs, "also stream the ledger")
	fs.BoolVar(&f.egressWitness, "egress-witness", false, "point the server's proxy variables at a loopback proxy that records every outbound connection")
	fs.Var(&f.egressDeny, "egress-deny", "with --egress-witness: refuse connections to these hosts (repeatable, comma-separated, *.suffix allowed)")
	f.remote.register(fs)
}

// Bounds of the numeric flags, stated in their --help text.
const (
	minMaxObserve    = 64 << 10 // a request's envelope must fit in what the tap sees
	maxMaxObserve    = 1 << 30
	minLedgerMaxSize = 4096
	maxDelay         = 24 * time.Hour
	maxKillGrace     = time.Hour
	maxMaxRestarts   = 1_000_000
)

// validate checks every numeric flag against its bounds, so that a bad value
// is a usage error at start and never a panic or a quietly broken session
// later (--max-observe 9000000000000000000 once failed the first long line).
func (f *shimFlags) validate() error {
	checks := []struct {
		bad        bool
		flag, want string
		value      any
	}{
		{f.maxObserve < minMaxObserve || f.maxObserve > maxMaxObserve, "max-observe", fmt.Sprintf("%d to %d bytes", minMaxObserve, maxMaxObserve), f.maxObserve},
		{f.ledgerMaxSize < minLedgerMaxSize, "ledger-max-size", fmt.Sprintf("at least %d bytes", minLedgerMaxSize), f.ledgerMaxSize},
		{f.handshakeTimeout < 0 || f.handshakeTimeout > maxDelay, "handshake-timeout", "0 (off) to 24h", f.handshakeTimeout},
		{f.killGrace < 0 || f.killGrace > maxKillGrace, "kill-grace", "0 to 1h", f.killGrace},
		{f.backoffMax < 0 || f.backoffMax > maxDelay, "backoff-max", "0 to 24h", f.backoffMax},
		{f.backoff < 0, "backoff", "0 or more", f.backoff},
		{f.backoff > f.backoffMax, "backoff-max", fmt.Sprintf("at least --backoff (%v)", f.backoff), f.backoffMax},
		{f.maxRestarts < 0 || f.maxRestarts > maxMaxRestarts, "max-restarts", fmt.Sprintf("0 to %d", maxMaxRestarts), f.maxRestarts},
		{f.restartWindow <= 0 || f.restartWindow > 365*maxDelay, "restart-window", "more than 0, at most 8760h", f.restartWindow},
		{f.stableAfter < 0, "stable-after", "0 or more", f.stableAfter},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("--%s %v: want %s", c.flag, c.value, c.want)
		}
	}
	return nil
}

// intFlag defines an int flag that refuses a value outside lo..hi when it is
// parsed (a usage error, exit 64), with the bounds in its help text.
func intFlag(fs *flag.FlagSet, p *int, name string, value, lo, hi int, usage string) {
	*p = value
	fs.Func(name, fmt.Sprintf("%s, %d to %d (default %d)", usage, lo, hi, value), func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("want a whole number")
		}
		if n < lo || n > hi {
			return fmt.Errorf("want %d to %d", lo, hi)
		}
		*p = n
		return nil
	})
}

func (f *shimFlags) policy() (supervisor.Policy, error) {
	p := supervisor.DefaultPolicy()
	mode, err := supervisor.ParseRestartMode(f.restart)
	if err != nil {
		return p, err
	}
	codes, err := supervisor.ParsePermafailCodes(f.permafail)
	if err != nil {
		return p, err
	}
	p.Mode, p.Backoff, p.BackoffMax, p.MaxRestarts, p.Window, p.StableAfter, p.PermafailCodes =
		mode, f.backoff, f.backoffMax, f.maxRestarts, f.restartWindow, f.stableAfter, codes
	p.Jitter = rand.Float64 // ±20%: shims restarted together do not retry in step
	return p, nil
}

// check refuses the flag values the shim cannot start with. Every check of a
// flag's value belongs here: wrap, wrap --check and probe call it on the flags
// baked into config entries (checkShimArgs).
func (f *shimFlags) check() error {
	if err := f.validate(); err != nil {
		return err
	}
	if _, err := f.policy(); err != nil {
		return err
	}
	if f.capture != "meta" && f.capture != "full" {
		return fmt.Errorf("--capture %q: want meta or full", f.capture)
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	}
	if f.lockMode != "warn" && f.lockMode != "enforce" {
		return fmt.Errorf("--lock-mode %q: want warn or enforce", f.lockMode)
	}
	return nil
}

// checkShimArgs parses args, the shim flags of a config entry (before its
// "--"), with the shim's own flag set and checks their values: the error is
// what the shim would say when the client starts it.
func checkShimArgs(args []string) error {
	var f shimFlags
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs, &cli{})
	if err := fs.Parse(args); err != nil {
		return cmdline.Explain(fs, err, "")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q before \"--\"", fs.Arg(0))
	}
	return f.check()
}

// shimFlagNames are the names of the shim's flags.
func shimFlagNames() []string {
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	var f shimFlags
	f.register(fs, &cli{})
	var names []string
	fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	return names
}

// shimFlag looks a flag name up in the shim's flag set: whether it is one,
// and whether it takes a value in the next argument (all but the booleans).
func shimFlag(name string) (known, takesValue bool) {
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	var f shimFlags
	f.register(fs, &cli{})
	fl := fs.Lookup(name)
	if fl == nil {
		return false, false
	}
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return true, !ok || !b.IsBoolFlag()
}

const shimUsage = `usage: mcpshim [flags] -- COMMAND [ARG...]
       mcpshim [flags] --url URL [--header 'Name: value']...
       mcpshim ledger|probe|lock|wrap|unwrap|demo|help|version ...

mcpshim is the command of an MCP client's server entry: it launches COMMAND,
relays its JSON-RPC byte for byte, and writes a phase ledger of the run.

flags:
`

func runShim(ctx context.Context, c *cli, args []string) int {
	var f shimFlags
	fs := flag.NewFlagSet("mcpshim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	f.register(fs, c)
	// The shim's flags end at the first argument that is not one: the
	// server's command line is the server's, flags and all.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stdout, shimUsage)
			cmdline.PrintFlags(c.stdout, fs)
			return 0
		}
		return usageError(c, cmdline.Explain(fs, err, "mcpshim --help").Error())
	}
	command := fs.Args()
	if f.remote.URL != "" && len(command) > 0 {
		return usageError(c, "--url and `-- COMMAND` both given: a server is either remote (--url) or a command")
	}
	if f.remote.URL == "" && len(command) == 0 {
		if len(args) == 0 { // a person trying it out: the whole usage
			fmt.Fprintln(c.stderr, "mcpshim: "+missingCommand)
			fmt.Fprint(c.stderr, shimUsage)
			cmdline.PrintFlags(c.stderr, fs)
			return exitUsage
		}
		return usageError(c, missingCommand)
	}
	// Without "--" (a launcher split the line at its own first "--"), the
	// first argument after the flags is the server's command, unless it
	// names a subcommand: then which was meant is unknown.
	if f.remote.URL == "" && !containsDashDash(args) && slices.Contains(subcommands, command[0]) {
		return usageError(c, fmt.Sprintf("missing `--` before %q: a subcommand goes first (mcpshim %s ...); a server's command goes after --, e.g. mcpshim --name fs -- %s", command[0], command[0], strings.Join(command, " ")))
	}
	usage := func(format string, args ...any) int {
		return usageError(c, fmt.Sprintf(format+" (mcpshim --help lists the flags)", args...))
	}
	if err := f.check(); err != nil {
		return usage("%v", err)
	}
	policy, err := f.policy() // check has parsed it
	if f.name == "" && f.remote.URL != "" {
		f.name = clientconfig.RemoteName(f.remote.URL)
	} else if f.name == "" {
		f.name = ledger.FileName(proc.Label(command))
	}
	var remoteCfg remote.Config
	if f.remote.URL != "" {
		set := map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
		if remoteCfg, err = remoteConfig(c, &f, set); err != nil {
			return usage("%v", err)
		}
	}
	var checkTools func([]json.RawMessage) []string
	if f.lock != "" {
		var notice string
		if checkTools, notice, err = lock.ForServer(f.lock, f.name, f.lockMode == "enforce"); err != nil {
			fmt.Fprintf(c.stderr, "mcpshim: %v\n", err)
			return exitConfig
		}
		if notice != "" {
			fmt.Fprintf(c.stderr, "mcpshim: %s\n", notice)
		}
	}
	stderr := proc.NewLog(c.stderr)
	// Last of all: what the log still holds goes out, unless the client does
	// not read its stderr (then the shim exits without it, logCloseBound on).
	defer stderr.Close(logCloseBound)
	file, ok := c.stdin.(*os.File)
	person := ok && isatty.IsTerminal(file.Fd())
	if person {
		fmt.Fprintln(stderr, "mcpshim: stdin is a terminal: mcpshim is meant to be launched by an MCP client (see `mcpshim help`); carrying on")
	}

	if _, ok := c.lookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(softLimit(f.maxObserve))
	}
	shimID := ledger.NewID("shim", time.Now())
	var spec proc.Spec
	var guard []string
	var first *supervisor.Launch
	if f.remote.URL == "" {
		spec = proc.Spec{Path: command[0], Args: command[1:], Env: c.env}
		if exe, err := os.Executable(); err == nil {
			guard = []string{exe, "guard"}
		}
		if !f.egressWitness { // the witness's proxy goes into the server's env
			// The server starts first: its start is most of the way to its
			// first answer, and the ledger and recorder start meanwhile.
			first = supervisor.Spawn(spec, guard)
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var events io.Writer = stderr
	if f.quiet {
		events = nil
	}
	otlp := f.otlp.config(c)
	otlp.Full = f.capture == "full"
	onRecord, stopOTLP := otelexport.StartSession(ctx, otlp, shimID, f.name, stderr)
	defer stopOTLP() // runs after rec.Close: every record has reached the exporter
	lw, _ := ledger.Open(ledger.Options{
		OnRecord: onRecord,
		Path:     ledger.PathFor(f.ledger, f.name, c.getenv),
		Shim:     shimID,
		Server:   f.name,
		MaxSize:  f.ledgerMaxSize,
		Events:   events,
		Notices:  stderr,
		JSON:     f.logFormat == "json",
		Color:    f.color.on(c, c.stderr),
	})
	tracker := &tap.Tracker{CaptureFull: f.capture == "full", HandshakeTimeout: f.handshakeTimeout}
	teller := &verdict.Teller{Name: f.name} // the verdict of each run, said when it ends
	rec := tap.NewRecorder(lw, tracker, tap.RecorderOptions{MaxBytes: int64(f.maxObserve) + 1<<20, Notices: stderr, Tell: teller.Record})

	if f.remote.URL != "" {
		remoteCfg.Recorder, remoteCfg.ClientIn, remoteCfg.ClientOut, remoteCfg.Signals = rec, c.stdin, c.stdout, sigs
		remoteCfg.CheckTools, remoteCfg.EnforceLock = checkTools, f.lockMode == "enforce"
		status := remote.Run(ctx, remoteCfg)
		closeRecorder(rec, stderr)
		return status
	}
	redact.HideEnvSecrets(spec.Env) // before anything is recorded
	var egress *witness.Witness
	if f.egressWitness {
		if egress, err = witness.Record(rec.Emit, f.egressDeny); err != nil {
			fmt.Fprintf(stderr, "mcpshim: egress witness: %v; carrying on unwitnessed\n", err)
		} else {
			spec.Env = append(append([]string(nil), spec.Env...), egress.Env()...)
		}
	}
	status := supervisor.Run(ctx, supervisor.Config{
		Name:        f.name,
		Spec:        spec,
		Guard:       guard,
		First:       first,
		Recorder:    rec,
		ClientIn:    c.stdin,
		ClientOut:   c.stdout,
		Stderr:      stderr,
		MaxObserve:  f.maxObserve,
		KillGrace:   f.killGrace,
		Policy:      policy,
		Signals:     sigs,
		DivertNoise: f.divertNoise,
		Witnessed:   egress != nil,
		CaptureFull: f.capture == "full",
		CheckTools:  checkTools,
		EnforceLock: f.lockMode == "enforce",
		Interactive: person,

		OnServerStderr: witness.ServerEvents(rec.Emit),
	})
	if egress != nil {
		egress.Close() // its last results reach the ledger before it closes
	}
	closeRecorder(rec, stderr)
	return status
}

// missingCommand is the usage error of a shim given no server.
const missingCommand = "missing `-- COMMAND`: put the server's command after --, e.g. mcpshim --name fs -- npx -y @modelcontextprotocol/server-filesystem /tmp"

// usageError is a shim that cannot start: msg on stderr, and as the answer
// to the client's first request (tellClient); exit 64.
func usageError(c *cli, msg string) int {
	fmt.Fprintln(c.stderr, "mcpshim: "+msg)
	tellClient(c, "mcpshim: "+msg)
	return exitUsage
}

// closeRecorder writes the ledger's last records, or says why it could not.
func closeRecorder(rec *tap.Recorder, stderr io.Writer) {
	if err := rec.Close(); err != nil {
		fmt.Fprintf(stderr, "mcpshim: %v\n", err)
	}
}

// logCloseBound is how long an exiting shim waits for a client that does
// not read its stderr to take the lines still queued for it.
const logCloseBound = time.Second

// softLimit is the GC's soft memory limit for a --max-observe: 24 MiB keeps
// a 64 MiB line's relay within ~32 MiB of RSS at the default (the collector
// runs before the heap doubles, bench/RESULTS.md); a larger --max-observe
// lets the tap and the recorder's queue each hold one more observed line of
// that size, and a limit below what they hold would run the collector
// without end.
func softLimit(maxObserve int) int64 {
	return 24<<20 + 2*max(0, int64(maxObserve)-jsonrpc.DefaultMaxObserve)
}

func containsDashDash(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

// hostList is a repeatable, comma-separated flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*h = append(*h, s)
		}
	}
	return nil
}
