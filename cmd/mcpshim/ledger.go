package main

// mcpshim ledger: what the phase ledgers say after an incident.
//
// --json prints one JSON document per command (tail --json streams the ledger
// lines themselves). Field names are stable:
//
//	mcpshim ledger --json
//	  {"files": [PATH], "records": N, "skipped_lines": N, "records_lost": N, "runs": [RUN]}
//	RUN
//	  run, short (the prefix shown), server, shim, origin, pid, generation,
//	  previous_run, next_run, started, ended (RFC 3339), duration_ms,
//	  outcome (READY TIMEOUT EXITED PROTOCOL_ERROR RUNNING ENDED CRASHED
//	  UNRECORDED, and for a remote run UNREACHABLE AUTH_REQUIRED), failed (the
//	  `!` of the table), fixable, alive (no exit recorded and the pid answers
//	  kill -0), last_event (the last confirmed event), detail (the reason, the
//	  table's WHY), cause (the line that says why), advice, warning,
//	  remote, url, address,
//	  handshake (the event that completed it), handshake_at, initialized, protocol_version,
//	  server_name, tools (null: never listed), tools_list_failed,
//	  calls {received, ok, is_error, error, input_required}, noise,
//	  noise_preview, noise_before_handshake, client_noise, egress, external,
//	  spawn_failed, error_class, error, hint, timeout_last_event, timeout_ms,
//	  exited, exit_code (null: killed by a signal, or no exit), signal,
//	  requested_by_shim, stop_reason, stderr_tail, stderr_cause, restarts_exhausted,
//	  attempts, records_lost, forged, records, and when they apply
//	  server_version, tools_list_error, lock_missing, lock_mode, external_target,
//	  external_by_server, denied_target, executable_ready, timeout_waiting,
//	  gave_up, end_reason, auth_status, www_authenticate, http_failure,
//	  http_failure_method, http_status (verdict.Facts and verdict.Verdict)
//	mcpshim ledger show RUN --json
//	  {"run": RUN, "diagnosis": TEXT (the reason), "advice": TEXT, "events": [EVENT], "skipped_lines": N}
//	EVENT
//	  {"ts", "offset_ms" (since the run's first record), "seq", "phase", "event", "origin", "fields": {...}}
//	mcpshim ledger why --json
//	  {"runs": [{"run": RUN, "answers": [ANSWER]}], "skipped_lines": N}
//	ANSWER
//	  {"key" (launched initialized tools external), "question", "answer" (yes no unknown), "reason", "evidence": EVENT or null}
//	mcpshim ledger stats --json
//	  {"records": N, "skipped_lines": N, "servers": [{"server", "runs", "failed", "outcomes": {OUTCOME: N}, "restarts",
//	   "zero_tool_discoveries", CALLS, "tools": [{"tool", CALLS}]}]}
//	CALLS
//	  "calls" (finished), "ok", "is_error", "errors", "input_required", "error_rate", "is_error_rate",
//	  "latency_ms": {"p50", "p95", "p99"} or null
//	mcpshim ledger report --html FILE --json
//	  {"file": PATH, "runs": N}
//	mcpshim ledger prune --older-than AGE --json
//	  {"removed": [{"path", "bytes", "modified"}], "kept": N, "dry_run": BOOL}

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

const ledgerUsage = `usage: mcpshim ledger [FILTERS] [PATH...]
           every run, newest last
       mcpshim ledger show RUN [PATH...]
           one run's timeline and diagnosis
       mcpshim ledger why [RUN | FILTERS] [PATH...]
           did it launch, initialize, list tools, reach out? (with no RUN:
           the latest run of each server)
       mcpshim ledger stats [--server NAME] [--since WHEN] [PATH...]
           calls, errors and latency per server and tool
       mcpshim ledger tail [-f] [-n N] [--server NAME] [PATH...]
           the latest events, and new ones as they come
       mcpshim ledger report --html FILE [FILTERS] [PATH...]
           a self-contained HTML waterfall per run
       mcpshim ledger prune --older-than 30d [--dry-run] [PATH...]
       mcpshim ledger export [--otlp URL] [PATH...]
           runs as OpenTelemetry traces

PATH is a ledger file or directory (- reads one from stdin); with none,
$MCPSHIM_LEDGER when set (as the shim reads it), else by default
  %s
and rotated files are read too. RUN is a unique prefix of a run id (with or
without "run_"), or the suffix the shim prints (…A4N8). FILTERS: --server
NAME, --since 2h|2026-11-29T08:00, --outcome EXITED,TIMEOUT, --failed. Every
command takes --json; --wide prints every column and whole lines on a narrow
terminal.
`

// runLedger reads ledgers and answers what happened: the run table and the
// show, why, stats, tail, report and prune subcommands.
func runLedger(ctx context.Context, c *cli, args []string) int {
	l := &ledgerCmd{c: c, now: time.Now(), loc: location(c)}
	defer func() {
		for _, f := range l.cleanup {
			f()
		}
	}()
	if len(args) > 0 {
		switch args[0] {
		case "show":
			return l.show(args[1:])
		case "why":
			return l.why(args[1:])
		case "stats":
			return l.stats(args[1:])
		case "tail":
			return l.tail(ctx, args[1:])
		case "report":
			return l.report(args[1:])
		case "prune":
			return l.prune(args[1:])
		case "export":
			return runLedgerExport(ctx, c, args[1:])
		case "help":
			return l.list([]string{"--help"}) // the usage and the run table's flags

		}
		// A word that is neither a subcommand nor a file: a typo.
		if _, err := os.Stat(args[0]); err != nil && !strings.HasPrefix(args[0], "-") {
			if s := cmdline.Suggest(args[0], strings.Fields(ledgerSubcommands)); s != "" {
				fmt.Fprintf(c.stderr, "mcpshim ledger: no subcommand or ledger file %q; did you mean %s?\n", args[0], s)
				return exitUsage
			}
		}
	}
	return l.list(args)
}

// ledgerCmd is one ledger command: its options and the process it runs in.
type ledgerCmd struct {
	c     *cli
	now   time.Time
	loc   *time.Location
	color bool

	json     bool
	cleanup  []func()        // run when the command is done: a spooled stdin
	width    int             // of the terminal, to fit tables and lines to; 0 in a pipe and with --wide
	servers  map[string]bool // --server, repeatable: any of them; nil is every server
	since    time.Time
	outcomes map[string]bool
	failed   bool
}

// Filter flags a command may take.
const (
	filterServer = 1 << iota
	filterSince
	filterOutcome // --outcome and --failed
	allFilters    = filterServer | filterSince | filterOutcome
)

// flags parses args, flags and positionals in any order (after "--" all are
// positionals), with --json, the filters named, and extra's own flags. A
// non-nil error means: exit with usageStatus(err).
func (l *ledgerCmd) flags(name string, args []string, filters int, extra func(fs *flag.FlagSet)) ([]string, error) {
	title := strings.TrimSpace("mcpshim ledger " + name)
	fs := flag.NewFlagSet(title, flag.ContinueOnError)
	fs.BoolVar(&l.json, "json", false, "print one JSON document")
	wide := false
	fs.BoolVar(&wide, "wide", false, "every column and whole lines, even on a narrow terminal")
	var color colorFlag
	color.register(fs, l.c)
	var since string
	var servers, outcomes flagList
	if filters&filterServer != 0 {
		fs.Var(&servers, "server", "only the server labelled `NAME` (repeat it for several)")
	}
	if filters&filterSince != 0 {
		fs.StringVar(&since, "since", "", "only runs started after `WHEN`: an age (2h, 3d) or a local time (2026-11-29T08:00)")
	}
	if filters&filterOutcome != 0 {
		fs.Var(&outcomes, "outcome", "only runs with one of these `OUTCOMES`, comma-separated or repeated")
		fs.BoolVar(&l.failed, "failed", false, "only runs that did not end up serving (not READY, ENDED or RUNNING), and runs whose client got an error answer to a call")
	}
	if extra != nil {
		extra(fs)
	}
	pos, err := cmdline.Parse(fs, args, title+" --help")
	if errors.Is(err, cmdline.ErrHelp) {
		fmt.Fprintf(l.c.stdout, ledgerUsage, ledger.DefaultDir(l.c.getenv))
		fmt.Fprintf(l.c.stdout, "\nflags of %s:\n", title)
		cmdline.PrintFlags(l.c.stdout, fs)
		return nil, err
	}
	if err != nil {
		fmt.Fprintf(l.c.stderr, "%s: %v\n", title, err)
		return nil, err
	}
	l.color = color.on(l.c, l.c.stdout)
	if !wide {
		l.width = terminalWidth(l.c, l.c.stdout)
	}
	if since != "" {
		t, err := parseSince(since, l.now, l.loc)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger: --since %s: %v\n", since, err)
			return nil, err
		}
		l.since = t
	}
	if len(servers) > 0 {
		l.servers = map[string]bool{}
		for _, name := range servers {
			l.servers[name] = true
		}
	}
	if len(outcomes) > 0 {
		l.outcomes = map[string]bool{}
		for _, o := range strings.Split(strings.Join(outcomes, ","), ",") {
			o = strings.ToUpper(strings.TrimSpace(o))
			if !slices.Contains(verdict.Outcomes, o) {
				err := fmt.Errorf("--outcome %s: no such outcome%s (the outcomes are %s)", o,
					cmdline.DidYouMean(o, verdict.Outcomes, ""), strings.Join(verdict.Outcomes, ", "))
				fmt.Fprintf(l.c.stderr, "%s: %v\n", title, err)
				return nil, err
			}
			l.outcomes[o] = true
		}
	}
	return pos, nil
}

// fail says why a ledger subcommand could not read its ledgers, and is its
// status.
func (l *ledgerCmd) fail(err error) int {
	fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
	return 1
}

// usageStatus is the exit status for a flags error: 0 for -h.
func usageStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return exitUsage
}

// keep applies the filters.
// filtered is what a view of the filtered runs reads: keep, and --server
// decided before a run is judged (of 1,000,000 runs, 900,000 another
// server's judged for nothing).
func (l *ledgerCmd) filtered() report.ReadOptions {
	opts := report.ReadOptions{Keep: l.keep}
	if len(l.servers) == 1 { // several are for keep alone
		for name := range l.servers {
			opts.Server = name
		}
	}
	return opts
}

// server says whether --server keeps the server's runs.
func (l *ledgerCmd) server(name string) bool { return l.servers == nil || l.servers[name] }

func (l *ledgerCmd) keep(r *report.Run) bool {
	return l.server(r.Server) &&
		(l.since.IsZero() || !r.Start.Before(l.since)) &&
		(l.outcomes == nil || l.outcomes[r.Outcome]) &&
		(!l.failed || r.Failed || r.Calls.Error > 0) // a run whose client got an error answer failed it, if not the run
}

// ledgerData is what one pass over the ledger files found.
type ledgerData struct {
	files []string
	*report.Result
	runs            *report.Store // the kept runs, oldest first (load)
	failed, running int64         // of the kept runs: marked !, still alive
}

// short is a run's short id, as the tables show it.
func (d *ledgerData) short(id string) string { return d.IDs.Short(id) }

// files resolves the paths, or the default directory when there are none,
// noting a default directory that does not exist yet.
func (l *ledgerCmd) files(paths []string) ([]string, error) {
	if i := slices.Index(paths, "-"); i >= 0 { // the ledger on stdin
		path, remove, err := spoolStdin(l.c)
		if err != nil {
			return nil, err
		}
		l.cleanup = append(l.cleanup, remove)
		paths = slices.Replace(slices.Clone(paths), i, i+1, path)
	}
	files, noneYet, err := ledger.FilesOrDefault(paths, l.c.getenv)
	if noneYet != "" {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: no ledger yet in %s (the shim writes one per server there)\n", noneYet)
	}
	return files, err
}

// read folds every record of the files, streaming: opts says what is kept
// besides the counts, and memory grows with that, not with the records. Every
// run's id is collected, for the short ids.
func (l *ledgerCmd) read(paths []string, opts report.ReadOptions) (*ledgerData, error) {
	files, err := l.files(paths)
	if err != nil {
		return nil, err
	}
	// The runs kept and the ids take about 230 bytes a run; past this the
	// collector works harder rather than let the heap double.
	debug.SetMemoryLimit(384 << 20)
	opts.Now, opts.Alive, opts.StatsSince, opts.IDs = l.now, proc.Alive, l.since, true
	d := &ledgerData{files: files, Result: report.Read(files, opts)}
	for _, err := range d.Errors {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
	}
	return d, nil
}

// load reads the ledgers and keeps the runs opts keeps (its Keep and
// Server; the zero value keeps all), oldest first.
func (l *ledgerCmd) load(paths []string, opts report.ReadOptions) (*ledgerData, error) {
	runs := &report.Store{}
	var failed, running atomic.Int64
	opts.Links = true
	opts.Run = func(r *report.Run, _ []string) {
		runs.Add(r)
		if r.Failed {
			failed.Add(1)
		}
		if r.Alive {
			running.Add(1)
		}
	}
	d, err := l.read(paths, opts)
	if err != nil {
		return nil, err
	}
	d.runs = runs
	d.failed, d.running = failed.Load(), running.Load()
	runs.Sort()
	return d, nil
}

// run is the i-th kept run, with the run restarted from it.
func (d *ledgerData) run(i int, r *report.Run) {
	d.runs.Run(i, r)
	r.NextRun = d.Next[r.ID]
}

// find is the kept run with the id, if there is one.
func (d *ledgerData) find(id string) (report.Run, bool) {
	var r report.Run
	i := d.runs.Index(id)
	if i >= 0 {
		d.run(i, &r)
	}
	return r, i >= 0
}

// entries reads the records of the wanted runs, each run's in order. It is
// the second pass of show, why and report: only their runs are kept whole.
func (l *ledgerCmd) entries(d *ledgerData, want map[string]bool) map[string][]ledger.Entry {
	return l.entriesCapped(d, want, math.MaxInt)
}

// parseSince reads an age back from now (2h, 3d) or a time: RFC 3339, or
// a local date and time such as 2026-11-29T08:00 or 2026-11-29.
func parseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if d, err := cmdline.ParseAge(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want an age (2h, 3d) or a time (2026-11-29T08:00)")
}

// location is where times are shown: $TZ from the command's environment
// ("" is UTC), else the process's local zone.
func location(c *cli) *time.Location {
	tz, ok := c.lookupEnv("TZ")
	if !ok {
		return time.Local
	}
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	return time.UTC
}

func (l *ledgerCmd) writeJSON(v any) int {
	if err := printJSON(l.c.stdout, v); err != nil {
		return l.fail(err)
	}
	return 0
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
