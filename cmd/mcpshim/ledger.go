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
//	  outcome (READY TIMEOUT EXITED PROTOCOL_ERROR RUNNING ENDED CRASHED UNRECORDED),
//	  alive (no exit recorded and the pid answers kill -0), last_event (the
//	  last event that shows progress), detail (why it stopped, in a few words),
//	  handshake (the event that completed it), handshake_at, initialized, protocol_version,
//	  server_name, tools (null: never listed), tools_list_failed,
//	  calls {received, ok, is_error, error, input_required}, noise,
//	  noise_preview, noise_before_handshake, client_noise, egress, external,
//	  spawn_failed, error_class, error, hint, timeout_last_event, timeout_ms,
//	  exited, exit_code (null: killed by a signal, or no exit), signal,
//	  requested_by_shim, stop_reason, stderr_tail, restarts_exhausted,
//	  records_lost, forged, records
//	mcpshim ledger show RUN --json
//	  {"run": RUN, "diagnosis": TEXT, "events": [EVENT], "skipped_lines": N}
//	EVENT
//	  {"ts", "offset_ms" (since the run's first record), "seq", "phase", "event", "origin", "fields": {...}}
//	mcpshim ledger why --json
//	  {"runs": [{"run": RUN, "answers": [ANSWER]}], "skipped_lines": N}
//	ANSWER
//	  {"key" (launched initialized tools external), "question", "answer" (yes no unknown), "reason", "evidence": EVENT or null}
//	mcpshim ledger stats --json
//	  {"records": N, "skipped_lines": N, "servers": [{"server", "runs", "outcomes": {OUTCOME: N}, "restarts",
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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/phases"
)

const ledgerUsage = `usage: mcpshim ledger [FILTERS] [PATH...]       every run, newest last
       mcpshim ledger show RUN [PATH...]            one run's timeline and diagnosis
       mcpshim ledger why [RUN | FILTERS] [PATH...]   did it launch, initialize, list tools, reach out?
                                                    (with no RUN: the latest run of each server)
       mcpshim ledger stats [--server NAME] [--since WHEN] [PATH...]
                                                    calls, errors and latency per server and tool
       mcpshim ledger tail [-f] [-n N] [--server NAME] [PATH...]
                                                    the latest events, and new ones as they come
       mcpshim ledger report --html FILE [FILTERS] [PATH...]
                                                    a self-contained HTML waterfall per run
       mcpshim ledger prune --older-than 30d [--dry-run] [PATH...]
       mcpshim ledger export [--otlp URL] [PATH...]    runs as OpenTelemetry traces

PATH is a ledger file or directory (default: %s); rotated files are read
too. RUN is a unique prefix of a run id (with or without "run_"), or the suffix
the shim prints (…A4N8). FILTERS: --server NAME, --since 2h|2026-11-29T08:00,
--outcome EXITED,TIMEOUT, --failed. Every command takes --json.
`

// runLedger reads ledgers and answers what happened: the run table and the
// show, why, stats, tail, report and prune subcommands.
func runLedger(ctx context.Context, c *cli, args []string) int {
	l := &ledgerCmd{c: c, now: time.Now(), loc: location(c), color: useColor(c)}
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
		case "help", "-h", "--help":
			fmt.Fprintf(c.stdout, ledgerUsage, phases.DefaultDir(c.getenv))
			return 0
		}
		// A word that is neither a subcommand nor a file: a typo.
		if _, err := os.Stat(args[0]); err != nil && !strings.HasPrefix(args[0], "-") {
			if s := suggest(args[0], strings.Fields(ledgerSubcommands)); s != "" {
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
	width    int // of the terminal, to fit tables and lines to; 0 in a pipe and with --wide
	server   string
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
	fs.SetOutput(l.c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(l.c.stderr, ledgerUsage, phases.DefaultDir(l.c.getenv))
		fmt.Fprintf(l.c.stderr, "\nflags of %s:\n", title)
		printFlags(l.c.stderr, fs)
	}
	fs.BoolVar(&l.json, "json", false, "print one JSON document")
	wide := false
	fs.BoolVar(&wide, "wide", false, "every column and whole lines, even on a narrow terminal")
	var since, outcome string
	if filters&filterServer != 0 {
		fs.StringVar(&l.server, "server", "", "only the server labelled `NAME`")
	}
	if filters&filterSince != 0 {
		fs.StringVar(&since, "since", "", "only runs started after `WHEN`: an age (2h, 3d) or a local time (2026-11-29T08:00)")
	}
	if filters&filterOutcome != 0 {
		fs.StringVar(&outcome, "outcome", "", "only runs with one of these `OUTCOMES`, comma-separated")
		fs.BoolVar(&l.failed, "failed", false, "only runs that did not end up serving (not READY, ENDED or RUNNING)")
	}
	if extra != nil {
		extra(fs)
	}
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if parsed := len(rest) - len(left); parsed > 0 && rest[parsed-1] == "--" {
			pos = append(pos, left...)
			break
		}
		pos, rest = append(pos, left[0]), left[1:]
	}
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
	if outcome != "" {
		l.outcomes = map[string]bool{}
		for _, o := range strings.Split(outcome, ",") {
			l.outcomes[strings.ToUpper(strings.TrimSpace(o))] = true
		}
	}
	return pos, nil
}

// usageStatus is the exit status for a flags error: 0 for -h.
func usageStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return exitUsage
}

// keep applies the filters.
func (l *ledgerCmd) keep(r *phases.Run) bool {
	return (l.server == "" || r.Server == l.server) &&
		(l.since.IsZero() || !r.Start.Before(l.since)) &&
		(l.outcomes == nil || l.outcomes[r.Outcome]) &&
		(!l.failed || r.Failed())
}

// ledgerData is what one pass over the ledger files found.
type ledgerData struct {
	files   []string
	sum     *phases.Summary
	runs    []phases.Run // every run, oldest first
	skipped int
	short   map[string]string // run id -> shortest unique prefix, for display
}

// files resolves the paths, or the default directory when there are none.
// A missing default directory is no ledger yet, not an error.
func (l *ledgerCmd) files(paths []string) ([]string, error) {
	if len(paths) > 0 {
		return phases.Files(paths)
	}
	dir := phases.DefaultDir(l.c.getenv)
	files, err := phases.Files([]string{dir})
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: no ledger yet in %s (the shim writes one per server there)\n", dir)
		return nil, nil
	}
	return files, err
}

// load folds every record of the files into per-run aggregates, streaming:
// memory grows with the runs, not with the records.
func (l *ledgerCmd) load(paths []string) (*ledgerData, error) {
	files, err := l.files(paths)
	if err != nil {
		return nil, err
	}
	d := &ledgerData{files: files, sum: phases.NewSummary()}
	d.sum.StatsSince = l.since
	for _, path := range files {
		n, err := scanFile(path, func(h *phases.Head) { d.sum.Add(h) })
		d.skipped += n
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		}
	}
	d.runs = d.sum.Runs(l.now, pidAlive)
	d.short = shortIDs(d.runs)
	return d, nil
}

// scanFile calls fn with every record of path and returns how many lines
// were skipped.
func scanFile(path string, fn func(h *phases.Head)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	s := phases.NewScanner(f)
	for s.Scan() {
		fn(s.Head())
	}
	if s.Err() != nil {
		return s.Skipped(), fmt.Errorf("read %s: %w", path, s.Err())
	}
	return s.Skipped(), nil
}

// loadKept reads the ledgers and returns the runs the filters keep.
func (l *ledgerCmd) loadKept(paths []string) (*ledgerData, []phases.Run, error) {
	d, err := l.load(paths)
	if err != nil {
		return nil, nil, err
	}
	var runs []phases.Run
	for i := range d.runs {
		if l.keep(&d.runs[i]) {
			runs = append(runs, d.runs[i])
		}
	}
	return d, runs, nil
}

// entries reads the records of the wanted runs, each run's in order. It is
// the second pass of show, why and report: only their runs are kept whole.
func (l *ledgerCmd) entries(d *ledgerData, want map[string]bool) map[string][]phases.Entry {
	return l.entriesCapped(d, want, math.MaxInt)
}

// pidAlive reports whether a process with this pid exists (kill -0).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// minShort is the shortest run prefix shown: the ULID's time part.
const minShort = 10

// shortIDs gives every run the shortest prefix (without "run_") that tells it
// apart from all others, the same length for all so the column lines up.
func shortIDs(runs []phases.Run) map[string]string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = strings.TrimPrefix(r.ID, "run_")
	}
	sort.Strings(ids)
	n := minShort
	for i := 1; i < len(ids); i++ {
		n = max(n, commonPrefix(ids[i-1], ids[i])+1)
	}
	out := make(map[string]string, len(runs))
	for _, r := range runs {
		id := strings.TrimPrefix(r.ID, "run_")
		out[r.ID] = id[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// errNoRun and errAmbiguousRun are resolve's failures.
var (
	errNoRun        = errors.New("no such run")
	errAmbiguousRun = errors.New("ambiguous run prefix")
)

// resolve finds the run arg names: a unique prefix of its id (with or without
// "run_"), or else a unique suffix as the shim prints it (…A4N8).
func resolve(runs []phases.Run, arg string) (*phases.Run, error) {
	want := strings.TrimPrefix(arg, "run_")
	suffix := strings.TrimPrefix(strings.TrimPrefix(want, "…"), "...")
	for _, match := range []func(id string) bool{
		func(id string) bool { return strings.HasPrefix(id, want) },
		func(id string) bool { return strings.HasSuffix(id, suffix) },
	} {
		var found []*phases.Run
		for i := range runs {
			if match(strings.TrimPrefix(runs[i].ID, "run_")) {
				found = append(found, &runs[i])
			}
		}
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			ids := make([]string, 0, 5)
			for _, r := range found[:min(len(found), 5)] {
				ids = append(ids, r.ID)
			}
			return nil, fmt.Errorf("%w %q: %d runs match (%s…)", errAmbiguousRun, arg, len(found), strings.Join(ids, ", "))
		}
	}
	// A typo: the run whose id, cut to arg's length, is nearest.
	best, bestD := "", 3
	for i := range runs {
		id := strings.TrimPrefix(runs[i].ID, "run_")
		for _, p := range [][2]string{{want, id[:min(len(want), len(id))]}, {suffix, id[max(0, len(id)-len(suffix)):]}} {
			if d := editDistance(strings.ToUpper(p[0]), strings.ToUpper(p[1])); d < bestD && d <= len(p[0])/3 {
				best, bestD = runs[i].ID, d
			}
		}
	}
	if best != "" {
		return nil, fmt.Errorf("%w %q; did you mean %s?", errNoRun, arg, best)
	}
	return nil, fmt.Errorf("%w %q", errNoRun, arg)
}

// list prints one row per run, newest last.
func (l *ledgerCmd) list(args []string) int {
	paths, err := l.flags("", args, allFilters, nil)
	if err != nil {
		return usageStatus(err)
	}
	d, runs, err := l.loadKept(paths)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	if l.json {
		out := struct {
			Files   []string  `json:"files"`
			Records int       `json:"records"`
			Skipped int       `json:"skipped_lines"`
			Lost    int       `json:"records_lost"`
			Runs    []runJSON `json:"runs"`
		}{nonNil(d.files), d.sum.Records, d.skipped, d.sum.Lost, make([]runJSON, 0, len(runs))}
		for _, r := range runs {
			out.Runs = append(out.Runs, runJSON{r, d.short[r.ID]})
		}
		return l.writeJSON(out)
	}
	p := painter(l.color)
	// On a narrow terminal: the noise count, the generation, the date, the
	// calls, the tools, the exit, the last event, the start time and the
	// duration give way, in that order; then WHY is cut. --wide and pipes
	// get them all.
	t := &table{steps: []fitStep{{10, true}, {4, true}, {1, false}, {9, true}, {8, true}, {11, true}, {7, true}, {1, true}, {5, true}}}
	t.add(cell{text: ""}, cell{text: "STARTED"}, cell{text: "SERVER"}, cell{text: "RUN"}, cell{text: "GEN", right: true},
		cell{text: "DURATION", right: true}, cell{text: "OUTCOME"}, cell{text: "LAST EVENT"}, cell{text: "TOOLS", right: true},
		cell{text: "CALLS ok/isErr/err"}, cell{text: "NOISE", right: true}, cell{text: "EXIT"}, cell{text: "WHY"})
	failed, running := 0, 0
	for i := range runs {
		r := &runs[i]
		mark := ""
		if r.Fixable() {
			mark = "!"
		}
		if r.Failed() {
			failed++
		}
		if r.Alive {
			running++
		}
		gen := "-"
		if r.Generation > 0 {
			gen = strconv.Itoa(r.Generation)
		}
		server := r.Server
		if r.Origin == phases.OriginProbe {
			server += " (probe)"
		}
		t.add(cell{text: mark, style: styleBoldRed},
			cell{text: r.Start.In(l.loc).Format("2006-01-02 15:04:05"), short: r.Start.In(l.loc).Format("01-02 15:04")},
			cell{text: server},
			cell{text: d.short[r.ID]},
			cell{text: gen, right: true},
			cell{text: phases.FormatMS(r.DurationMS), right: true},
			cell{text: r.Outcome, style: outcomeStyle(r.Outcome)},
			cell{text: r.LastEvent},
			cell{text: toolsText(r), right: true},
			cell{text: callsText(r)},
			cell{text: strconv.Itoa(r.Noise), right: true, style: map[bool]string{true: styleYellow}[r.Noise > 0]},
			cell{text: exitText(r), style: map[bool]string{true: styleCyan}[r.Alive]},
			cell{text: oneLine(r.Detail, 100)})
	}
	if len(runs) > 0 {
		t.write(l.c.stdout, p, l.width)
	}
	parts := []string{fmt.Sprintf("%d runs (%d failed, %d running) in %d files", len(runs), failed, running, len(d.files))}
	if d.skipped > 0 {
		parts = append(parts, plural(d.skipped, "line")+" skipped (torn or not ledger records)")
	}
	if d.sum.Lost > 0 {
		parts = append(parts, plural(d.sum.Lost, "record")+" lost by the shims (records_lost)")
	}
	sep := "; "
	if l.width > 0 && utf8.RuneCountInString(strings.Join(parts, sep)) > l.width {
		sep = ";\n" // a part per line rather than one wrapped by the terminal
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = p.paint(styleYellow, parts[i])
	}
	fmt.Fprintln(l.c.stdout, strings.Join(parts, sep))
	return 0
}

// runJSON is a run as --json prints it.
type runJSON struct {
	phases.Run
	Short string `json:"short"`
}

func toolsText(r *phases.Run) string {
	if r.Tools == nil {
		return "-"
	}
	return strconv.Itoa(*r.Tools)
}

func callsText(r *phases.Run) string {
	c := r.Calls
	if c.Received == 0 && c.OK+c.IsError+c.Error == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d/%d", c.OK, c.IsError, c.Error)
}

// exitText is the EXIT column: how the process ended, or that it has not.
func exitText(r *phases.Run) string {
	switch {
	case r.Alive:
		return "running"
	case r.SpawnFailed:
		return "not started"
	case r.Signal != "":
		return r.Signal
	case r.ExitCode != nil:
		return "exit " + strconv.Itoa(*r.ExitCode)
	case !r.Exited:
		return "unrecorded"
	}
	return "-"
}

// show prints one run's timeline: phases grouped, relative times, each
// request with its latency, the stderr tail, restarts, and a diagnosis.
func (l *ledgerCmd) show(args []string) int {
	pos, err := l.flags("show", args, 0, nil)
	if err != nil {
		return usageStatus(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger show: which run? (mcpshim ledger lists them)")
		return exitUsage
	}
	d, err := l.load(pos[1:])
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	r, err := resolve(d.runs, pos[0])
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger show: %v\n", err)
		return 1
	}
	es := l.entries(d, map[string]bool{r.ID: true})[r.ID]
	byID := runIndex(d.runs)
	if l.json {
		out := struct {
			Run       runJSON     `json:"run"`
			Diagnosis string      `json:"diagnosis"`
			Events    []eventJSON `json:"events"`
			Skipped   int         `json:"skipped_lines"`
		}{runJSON{*r, d.short[r.ID]}, phases.Diagnosis(r), make([]eventJSON, 0, len(es)), d.skipped}
		for i := range es {
			out.Events = append(out.Events, toEventJSON(&es[i], es[0].Time))
		}
		return l.writeJSON(out)
	}
	p := painter(l.color)
	w := l.c.stdout
	fmt.Fprintf(w, "%s  %s · generation %d · pid %d · %s\n", p.paint(styleBold, r.ID), r.Server, r.Generation, r.PID, r.Shim)
	fmt.Fprintf(w, "started %s · lasted %s · %s", r.Start.In(l.loc).Format("2006-01-02 15:04:05.000 MST"),
		phases.FormatMS(r.DurationMS), p.paint(outcomeStyle(r.Outcome), r.Outcome))
	if r.Alive {
		fmt.Fprint(w, " (still running)")
	}
	fmt.Fprintln(w)
	for _, link := range []struct{ label, id string }{{"previous run", r.PreviousRun}, {"next run", r.NextRun}} {
		if link.id == "" {
			continue
		}
		if o, ok := byID[link.id]; ok {
			about := p.paint(outcomeStyle(o.Outcome), o.Outcome)
			if o.Detail != "" {
				about += ", " + oneLine(o.Detail, 80)
			}
			fmt.Fprintf(w, "%s: %s (%s)\n", link.label, d.short[link.id], about)
		} else {
			fmt.Fprintf(w, "%s: %s (not in these files)\n", link.label, link.id)
		}
	}
	var phase phases.Phase
	for i := range es {
		e := &es[i]
		if e.Phase != phase || i == 0 {
			phase = e.Phase
			fmt.Fprintf(w, "\n%s\n", p.paint(styleBold, string(phase)))
		}
		text := fieldsText(e, 60, "stderr_tail", "latency_ms")
		if ms, ok := e.Float("latency_ms"); ok {
			text = strings.TrimSpace(text + " " + p.paint(styleBold, "latency "+phases.FormatMS(ms)))
		}
		origin := ""
		if e.Origin != "" {
			origin = p.paint(styleDim, " ["+e.Origin+"]")
		}
		line := fmt.Sprintf("  %s  %s%s  %s", p.paint(styleDim, offset(e.Time.Sub(es[0].Time))), p.paint(eventStyle(e), e.Event), origin, text)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if len(r.StderrTail) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.paint(styleBold, "stderr tail"))
		for _, s := range r.StderrTail {
			fmt.Fprintf(w, "  | %s\n", s)
		}
	}
	if d.skipped > 0 {
		fmt.Fprintf(w, "\n%s skipped in the ledger files (torn or not ledger records)\n", plural(d.skipped, "line"))
	}
	fmt.Fprintf(w, "\n%s %s\n", p.paint(styleBold, "diagnosis:"), phases.Diagnosis(r))
	return 0
}

func runIndex(runs []phases.Run) map[string]*phases.Run {
	m := make(map[string]*phases.Run, len(runs))
	for i := range runs {
		m[runs[i].ID] = &runs[i]
	}
	return m
}

// offset prints a time since the run's first record, right-aligned:
// +1.234s, +2m03.456s.
func offset(d time.Duration) string {
	s := fmt.Sprintf("+%.3fs", d.Seconds())
	if d >= time.Minute {
		s = fmt.Sprintf("+%dm%06.3fs", int(d.Minutes()), d.Seconds()-60*float64(int(d.Minutes())))
	}
	return fmt.Sprintf("%9s", s)
}

// why answers seed 002's four questions for one run, or for the latest run
// of each server.
func (l *ledgerCmd) why(args []string) int {
	pos, err := l.flags("why", args, allFilters, nil)
	if err != nil {
		return usageStatus(err)
	}
	// A first positional that is not a path is a run.
	var runArg string
	if len(pos) > 0 {
		if _, err := os.Stat(pos[0]); err != nil {
			runArg, pos = pos[0], pos[1:]
		}
	}
	d, err := l.load(pos)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	var picked []*phases.Run
	if runArg != "" {
		r, err := resolve(d.runs, runArg)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger why: %v\n", err)
			return 1
		}
		picked = append(picked, r)
	} else {
		latest := map[string]*phases.Run{}
		for i := range d.runs {
			if r := &d.runs[i]; l.keep(r) {
				latest[r.Server] = r // runs are oldest first
			}
		}
		for _, r := range latest {
			picked = append(picked, r)
		}
		sort.Slice(picked, func(i, j int) bool { return picked[i].Server < picked[j].Server })
	}
	if len(picked) == 0 {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger why: no run matches")
		return 1
	}
	want := map[string]bool{}
	for _, r := range picked {
		want[r.ID] = true
	}
	entries := l.entries(d, want)
	type runAnswers struct {
		Run     runJSON      `json:"run"`
		Answers []answerJSON `json:"answers"`
	}
	out := struct {
		Runs    []runAnswers `json:"runs"`
		Skipped int          `json:"skipped_lines"`
	}{Skipped: d.skipped}
	p := painter(l.color)
	for n, r := range picked {
		es := entries[r.ID]
		answers := phases.Explain(r, es)
		if l.json {
			ra := runAnswers{Run: runJSON{*r, d.short[r.ID]}}
			for _, a := range answers {
				aj := answerJSON{Answer: a}
				if a.Evidence != nil {
					ev := toEventJSON(a.Evidence, es[0].Time)
					aj.Evidence = &ev
				}
				ra.Answers = append(ra.Answers, aj)
			}
			out.Runs = append(out.Runs, ra)
			continue
		}
		if n > 0 {
			fmt.Fprintln(l.c.stdout)
		}
		fmt.Fprintf(l.c.stdout, "%s · run %s · %s · %s\n", p.paint(styleBold, r.Server), d.short[r.ID],
			r.Start.In(l.loc).Format("2006-01-02 15:04:05"), p.paint(outcomeStyle(r.Outcome), r.Outcome))
		// A narrow terminal gets the reason and the evidence on lines of
		// their own under the answer, cut to its width.
		narrow := l.width > 0 && l.width < 2+38+1+7+2+60
		for _, a := range answers {
			answer := p.paint(answerStyle(a.Answer), fmt.Sprintf("%-7s", a.Answer))
			evidence := ""
			if a.Evidence != nil {
				evidence = "evidence: " + oneLine(l.evidenceLine(a.Evidence), 110)
			}
			if narrow {
				fmt.Fprintf(l.c.stdout, "  %-38s %s\n      %s\n", a.Question, strings.TrimRight(answer, " "), l.fit(a.Reason, 6))
				if evidence != "" {
					fmt.Fprintf(l.c.stdout, "      %s\n", p.paint(styleDim, l.fit(evidence, 6)))
				}
				continue
			}
			fmt.Fprintf(l.c.stdout, "  %-38s %s  %s\n", a.Question, answer, l.fit(a.Reason, 2+38+1+7+2))
			if a.Evidence != nil {
				fmt.Fprintf(l.c.stdout, "  %-38s %s\n", "", p.paint(styleDim, l.fit(evidence, 2+38+1)))
			}
		}
	}
	if l.json {
		return l.writeJSON(out)
	}
	if d.skipped > 0 {
		fmt.Fprintf(l.c.stdout, "\n%s skipped in the ledger files (torn or not ledger records)\n", plural(d.skipped, "line"))
	}
	return 0
}

// answerJSON is an Answer with its evidence as an EVENT.
type answerJSON struct {
	phases.Answer
	Evidence *eventJSON `json:"evidence"`
}

// stats prints calls, error rates, latency percentiles, restarts and
// zero-tool discoveries per server and per tool.
func (l *ledgerCmd) stats(args []string) int {
	paths, err := l.flags("stats", args, filterServer|filterSince, nil)
	if err != nil {
		return usageStatus(err)
	}
	d, runs, err := l.loadKept(paths)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	// --since counts the runs started since and the calls made since.
	var servers []phases.ServerStats
	for _, st := range d.sum.Stats(runs) {
		if (l.server == "" || st.Server == l.server) && (st.Runs > 0 || st.Calls > 0 || st.Restarts > 0) {
			servers = append(servers, st)
		}
	}
	if l.json {
		return l.writeJSON(struct {
			Records int                  `json:"records"`
			Skipped int                  `json:"skipped_lines"`
			Servers []phases.ServerStats `json:"servers"`
		}{d.sum.Records, d.skipped, nonNil(servers)})
	}
	p := painter(l.color)
	// Narrow: ZERO-TOOL, P99, ISERROR, RESTARTS and P50 give way, in that order.
	t := &table{steps: []fitStep{{4, true}, {10, true}, {7, true}, {3, true}, {8, true}}}
	t.add(cell{text: "SERVER / tool"}, cell{text: "RUNS", right: true}, cell{text: "OUTCOMES"}, cell{text: "RESTARTS", right: true},
		cell{text: "ZERO-TOOL", right: true}, cell{text: "CALLS", right: true}, cell{text: "ERROR", right: true},
		cell{text: "ISERROR", right: true}, cell{text: "P50", right: true}, cell{text: "P95", right: true}, cell{text: "P99", right: true})
	for _, st := range servers {
		t.add(append([]cell{{text: st.Server, style: styleBold}, {text: strconv.Itoa(st.Runs), right: true},
			{text: outcomesText(st.Outcomes)}, {text: strconv.Itoa(st.Restarts), right: true},
			{text: strconv.Itoa(st.ZeroToolDiscoveries), right: true}}, callCells(st.CallStats)...)...)
		for _, tool := range st.Tools {
			name := tool.Tool
			if name == "" {
				name = "(unknown)"
			}
			t.add(append([]cell{{text: "  " + name}, {}, {}, {}, {}}, callCells(tool.CallStats)...)...)
		}
	}
	if len(servers) > 0 {
		t.write(l.c.stdout, p, l.width)
	}
	fmt.Fprintf(l.c.stdout, "%s, %s in %d files", plural(len(servers), "server"), plural(d.sum.Records, "record"), len(d.files))
	if d.skipped > 0 {
		fmt.Fprintf(l.c.stdout, "; %s skipped", plural(d.skipped, "line"))
	}
	fmt.Fprintln(l.c.stdout, "; latency percentiles within 3%")
	return 0
}

func callCells(c phases.CallStats) []cell {
	rate := func(r float64, style string) cell {
		if c.Calls == 0 {
			return cell{text: "-", right: true}
		}
		if r == 0 {
			style = ""
		}
		return cell{text: fmt.Sprintf("%.1f%%", 100*r), right: true, style: style}
	}
	out := []cell{{text: strconv.Itoa(c.Calls), right: true}, rate(c.ErrorRate, styleRed), rate(c.IsErrorRate, styleYellow)}
	if c.Latency == nil {
		return append(out, cell{text: "-", right: true}, cell{text: "-", right: true}, cell{text: "-", right: true})
	}
	for _, v := range []float64{c.Latency.P50, c.Latency.P95, c.Latency.P99} {
		out = append(out, cell{text: phases.FormatMS(v), right: true})
	}
	return out
}

// outcomesText is "ENDED 3, CRASHED 1", most frequent first.
func outcomesText(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprintf("%s %d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}

// prune removes whole ledger files last written before the cutoff.
func (l *ledgerCmd) prune(args []string) int {
	var age string
	var dry bool
	paths, err := l.flags("prune", args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&age, "older-than", "", "remove files last written more than `AGE` ago (30d, 12h)")
		fs.BoolVar(&dry, "dry-run", false, "say what would be removed, remove nothing")
	})
	if err != nil {
		return usageStatus(err)
	}
	if age == "" {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger prune: --older-than is required (e.g. --older-than 30d)")
		return exitUsage
	}
	d, err := parseAge(age)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger prune: --older-than %s: %v\n", age, err)
		return exitUsage
	}
	files, err := l.files(paths)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	type removed struct {
		Path     string    `json:"path"`
		Bytes    int64     `json:"bytes"`
		Modified time.Time `json:"modified"`
	}
	out := struct {
		Removed []removed `json:"removed"`
		Kept    int       `json:"kept"`
		DryRun  bool      `json:"dry_run"`
	}{Removed: []removed{}, DryRun: dry}
	cutoff := l.now.Add(-d)
	status := 0
	for _, path := range files {
		fi, err := os.Stat(path)
		if err != nil || !fi.ModTime().Before(cutoff) {
			out.Kept++
			continue
		}
		if !dry {
			if err := os.Remove(path); err != nil {
				fmt.Fprintf(l.c.stderr, "mcpshim ledger prune: %v\n", err)
				status = 1
				out.Kept++
				continue
			}
		}
		out.Removed = append(out.Removed, removed{path, fi.Size(), fi.ModTime().UTC()})
	}
	if l.json {
		if rc := l.writeJSON(out); rc != 0 {
			return rc
		}
		return status
	}
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	var total int64
	for _, r := range out.Removed {
		total += r.Bytes
		fmt.Fprintf(l.c.stdout, "%s %s (%s, last written %s)\n", verb, r.Path, sizeText(r.Bytes), r.Modified.In(l.loc).Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(l.c.stdout, "%s %s (%s); kept %d\n", verb, plural(len(out.Removed), "file"), sizeText(total), out.Kept)
	return status
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// parseAge reads 30d, 2w, 12h, 90m or any Go duration.
func parseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			v, err := strconv.ParseFloat(s[:n-1], 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("want a number before %q", s[n-1:])
			}
			return time.Duration(v * float64(u)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want an age such as 30d, 12h or 90m")
	}
	return d, nil
}

// parseSince reads an age back from now (2h, 3d) or a time: RFC 3339, or
// a local date and time such as 2026-11-29T08:00 or 2026-11-29.
func parseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if d, err := parseAge(s); err == nil {
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

// useColor: only on a terminal, never with NO_COLOR or TERM=dumb.
func useColor(c *cli) bool {
	if c.getenv("NO_COLOR") != "" || c.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := c.stdout.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (l *ledgerCmd) writeJSON(v any) int {
	enc := json.NewEncoder(l.c.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
		return 1
	}
	return 0
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// eventJSON is one record as --json prints it.
type eventJSON struct {
	Time     time.Time      `json:"ts"`
	OffsetMS float64        `json:"offset_ms"`
	Seq      uint64         `json:"seq"`
	Phase    phases.Phase   `json:"phase"`
	Event    string         `json:"event"`
	Origin   string         `json:"origin,omitempty"`
	Fields   map[string]any `json:"fields"`
}

func toEventJSON(e *phases.Entry, start time.Time) eventJSON {
	f := e.Fields
	if f == nil {
		f = map[string]any{}
	}
	return eventJSON{e.Time, float64(e.Time.Sub(start).Microseconds()) / 1000, e.Seq, e.Phase, e.Event, e.Origin, f}
}

// evidenceKeys are the fields that make an event evidence; other events
// show all theirs.
var evidenceKeys = map[string][]string{
	phases.SpawnRequested:      {"egress", "generation", "command"},
	phases.Spawned:             {"pgid", "generation"},
	phases.Exited:              {"exit_code", "signal", "last_event", "handshake", "requested_by_shim"},
	phases.InitializeResponded: {"protocol_version", "server_name", "server_version", "latency_ms"},
	phases.HandshakeReplayed:   {"protocol_version", "latency_ms"},
	phases.ToolsListResponded:  {"tool_count", "tools", "latency_ms"},
}

// evidenceLine is a record as evidence, on one line:
// 15:04:05.000 phase event key=value…
func (l *ledgerCmd) evidenceLine(e *phases.Entry) string {
	fields := fieldsText(e, 40, "stderr_tail")
	if keys, ok := evidenceKeys[e.Event]; ok {
		var parts []string
		for _, k := range keys {
			if v, ok := e.Fields[k]; ok {
				parts = append(parts, k+"="+oneLine(valueText(v), 40))
			}
		}
		fields = strings.Join(parts, " ")
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", e.Time.In(l.loc).Format("15:04:05.000"), e.Phase, e.Event, fields))
}

// fieldsText prints an event's fields as key=value in name order, each value
// cut to width, without the keys in skip.
func fieldsText(e *phases.Entry, width int, skip ...string) string {
	var b strings.Builder
	for _, k := range e.FieldKeys() {
		if contains(skip, k) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(oneLine(valueText(e.Fields[k]), width))
	}
	return b.String()
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func valueText(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" || strings.ContainsAny(v, " \"=\t\n") {
			return strconv.Quote(v)
		}
		return v
	case json.Number:
		return v.String()
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// oneLine makes s one line of at most width runes.
// fit cuts s, printed after indent columns, to the terminal's width with
// "…"; whole in a pipe or with --wide, and never below 20 characters.
func (l *ledgerCmd) fit(s string, indent int) string {
	if l.width <= 0 {
		return s
	}
	return oneLine(s, max(l.width-indent, 20))
}

func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// Styles are ANSI SGR sequences; painter applies them only when colour is on.
const (
	styleBold    = "\x1b[1m"
	styleDim     = "\x1b[2m"
	styleRed     = "\x1b[31m"
	styleBoldRed = "\x1b[1;31m"
	styleGreen   = "\x1b[32m"
	styleYellow  = "\x1b[33m"
	styleMagenta = "\x1b[35m"
	styleCyan    = "\x1b[36m"
)

type painter bool

func (p painter) paint(style, s string) string {
	if !p || style == "" || s == "" {
		return s
	}
	return style + s + "\x1b[0m"
}

// outcomeStyle makes the fixable failures stand out.
func outcomeStyle(outcome string) string {
	switch outcome {
	case phases.OutcomeExited, phases.OutcomeProtocolError:
		return styleBoldRed
	case phases.OutcomeCrashed:
		return styleRed
	case phases.OutcomeTimeout:
		return styleYellow
	case phases.OutcomeReady, phases.OutcomeEnded:
		return styleGreen
	case phases.OutcomeRunning:
		return styleCyan
	}
	return styleMagenta
}

func answerStyle(a string) string {
	switch a {
	case "yes":
		return styleGreen
	case "no":
		return styleRed
	}
	return styleYellow
}

// eventStyle colours failures red and warnings yellow.
func eventStyle(e *phases.Entry) string {
	switch e.Event {
	case phases.SpawnFailed, phases.InitializeFailed, phases.DiscoverFailed, phases.ToolsListFailed, phases.HandshakeTimeout,
		phases.PendingFailed, phases.RestartsExhausted, phases.ReplayFailed, phases.ForgedEvent, phases.RecordsLost, phases.ExternalDenied:
		return styleRed
	case phases.StdoutNoise, phases.KillRequested, phases.RestartScheduled, phases.SignalReceived, phases.ClientNoise, phases.ToolsMissing:
		return styleYellow
	case phases.Exited:
		if code, _ := e.Int("exit_code"); (code != 0 || e.Str("signal") != "") && !e.Bool("requested_by_shim") {
			return styleRed
		}
	case phases.ToolCallResponded:
		if e.Str("outcome") != "success" {
			return styleYellow
		}
	case phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed:
		return styleGreen
	}
	return ""
}

// table lines up cells in columns; styles are applied after padding so
// escape sequences never skew the widths. Given a width, it fits: it takes
// its fit steps in order (shorten a column to each cell's short text, or
// drop it) until the rows fit, then cuts the last column with "…".
type table struct {
	rows  [][]cell
	steps []fitStep
}

type cell struct {
	text  string
	style string
	right bool
	short string // the text once its column is shortened; "" keeps text
}

// fitStep shortens (drop false) or drops column col.
type fitStep struct {
	col  int
	drop bool
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// write prints the table; width 0 is unlimited.
func (t *table) write(w io.Writer, p painter, width int) {
	const lastRoom = 32 // what the last column keeps before the others give way
	dropped := map[int]bool{}
	short := map[int]bool{}
	widths := func() ([]int, int) {
		var ws []int
		for _, row := range t.rows {
			for i, c := range row {
				if i >= len(ws) {
					ws = append(ws, 0)
				}
				if !dropped[i] {
					ws[i] = max(ws[i], utf8.RuneCountInString(c.shown(short[i])))
				}
			}
		}
		total := 0
		for i, n := range ws {
			if i == len(ws)-1 {
				n = min(n, lastRoom) // the last column is cut before the others give way
			}
			if n > 0 && !dropped[i] {
				total += n + 2
			}
		}
		return ws, total - 2
	}
	ws, total := widths()
	for _, st := range t.steps {
		if width <= 0 || total <= width {
			break
		}
		if st.drop {
			dropped[st.col] = true
		} else {
			short[st.col] = true
		}
		ws, total = widths()
	}
	last := len(ws) - 1
	cut := 0 // the last column's room, when it must be cut
	if last >= 0 {
		if full := total - min(ws[last], lastRoom) + ws[last]; width > 0 && full > width {
			cut = max(ws[last]-(full-width), 12)
		}
	}
	var b strings.Builder
	for _, row := range t.rows {
		b.Reset()
		for i, c := range row {
			if dropped[i] {
				continue
			}
			text := c.shown(short[i])
			if i == last && cut > 0 {
				text = oneLine(text, cut)
			}
			pad := strings.Repeat(" ", max(ws[i]-utf8.RuneCountInString(text), 0))
			if i == len(row)-1 && !c.right {
				pad = ""
			}
			if c.right {
				b.WriteString(pad + p.paint(c.style, text))
			} else {
				b.WriteString(p.paint(c.style, text) + pad)
			}
			if i < len(row)-1 && ws[i] > 0 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func (c cell) shown(short bool) string {
	if short && c.short != "" {
		return c.short
	}
	return c.text
}
