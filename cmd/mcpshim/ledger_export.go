package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/otelexport"
	"github.com/mcpshim-dev/mcpshim/proc"
)

const ledgerExportUsage = `usage: mcpshim ledger export [--otlp URL] [--state FILE|off]
                             [--capture meta|full] [--json] [PATH...]

Ships ledgers to an OpenTelemetry collector as traces: one trace per run, a
span per phase (launch, handshake, discovery) and per request. It remembers in
the state file how far each ledger was exported, so running it again (after a
session, from cron) sends only what is new; a run still going is finished by a
later export, and one whose server is gone with no exit recorded (its shim
was killed) is ended UNRECORDED, as mcpshim ledger judges it. PATH is a
ledger file or directory, by default
  %s
Headers, TLS and timeouts come from the OTEL_EXPORTER_OTLP_* variables.

flags:
`

// ledgerExportJSON is what --json prints.
type ledgerExportJSON struct {
	Collector string `json:"collector"`
	State     string `json:"state"` // "" when off
	Files     int    `json:"files"` // files with new records
	Records   int    `json:"records"`
	Spans     int    `json:"spans"`
	Skipped   int    `json:"skipped_lines"`
	OpenRuns  int    `json:"open_runs"` // runs whose root span waits for their exit
	// Unrecorded are runs with no exit whose server is gone (their shim was
	// killed): ended at their last record, UNRECORDED.
	Unrecorded int    `json:"unrecorded_runs"`
	Error      string `json:"error,omitempty"`
}

// runLedgerExport is `mcpshim ledger export`: the resumable batch export.
func runLedgerExport(ctx context.Context, c *cli, args []string) int {
	var (
		otlp    otlpFlags
		state   string
		asJSON  bool
		capture string
	)
	fs := flag.NewFlagSet("mcpshim ledger export", flag.ContinueOnError)
	otlp.register(fs, "send the ledgers")
	fs.StringVar(&state, "state", "", "remember progress in `FILE` (default: one per collector in the ledger directory); off sends everything again")
	fs.BoolVar(&asJSON, "json", false, "print one JSON document")
	fs.StringVar(&capture, "capture", "meta", "meta: a launch span names the command and the variables the shim hid; full: also every variable's name, PATH and cwd")
	paths, err := cmdline.Parse(fs, args, "mcpshim ledger export --help")
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		fmt.Fprintf(c.stdout, ledgerExportUsage, ledger.DefaultDir(c.getenv))
		cmdline.PrintFlags(c.stdout, fs)
		return 0
	case err != nil:
		fmt.Fprintf(c.stderr, "mcpshim ledger export: %v\n", err)
		return exitUsage
	}
	if capture != "meta" && capture != "full" {
		fmt.Fprintf(c.stderr, "mcpshim ledger export: --capture %q: want meta or full\n", capture)
		return exitUsage
	}
	cfg, ok := otlp.config(c).Resolve()
	if !ok {
		fmt.Fprintln(c.stderr, "mcpshim ledger export: no collector: give --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
		return exitUsage
	}
	switch state {
	case "off":
		state = ""
	case "":
		// One per collector: exporting to a second one starts from the beginning.
		state = cfg.StatePath(ledger.DefaultDir(c.getenv))
	}
	files, _, err := ledger.FilesOrDefault(paths, c.getenv)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim ledger export: %v\n", err)
		return exitUsage
	}
	exp, err := otelexport.NewExporter(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim ledger export: %v\n", err)
		return exitUsage
	}
	res, err := otelexport.ExportFiles(ctx, exp, files, otelexport.BatchOptions{State: state, Full: capture == "full", Alive: proc.Alive,
		Base: otelexport.BaseResource(otelexport.Identity{Version: shimVersion()}, c.getenv)})
	if serr := exp.Shutdown(ctx); err == nil && serr != nil {
		err = serr
	}
	if asJSON {
		out := ledgerExportJSON{Collector: cfg.Collector(), State: state, Files: res.Files, Records: res.Records,
			Spans: res.Spans, Skipped: res.Skipped, OpenRuns: res.Open, Unrecorded: res.Ended}
		if err != nil {
			out.Error = err.Error()
		}
		if code := c.emitJSON("ledger export", out, 0); err == nil {
			return code
		}
	} else if err == nil {
		fmt.Fprintf(c.stdout, "%d records from %d files: %d spans to %s", res.Records, res.Files, res.Spans, cfg.Collector())
		if res.Ended > 0 {
			fmt.Fprintf(c.stdout, "; %d runs UNRECORDED (no exit recorded and the server is gone: its shim was killed)", res.Ended)
		}
		if res.Open > 0 {
			fmt.Fprintf(c.stdout, "; %d runs still going (their root spans follow when they end)", res.Open)
		}
		fmt.Fprintln(c.stdout)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpshim ledger export: %v (the next export retries from the last file that went through)\n", err)
		return 1
	}
	return 0
}
