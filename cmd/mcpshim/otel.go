package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcpshim-dev/mcpshim/otelexport"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// otlpCloseGrace is how long a session's end waits for the last spans to
// reach the collector: the client is gone, but its supervisor may be timing
// our exit.
const otlpCloseGrace = 2 * time.Second

// otlpFlags are the OpenTelemetry flags of the shim and of ledger export.
type otlpFlags struct {
	endpoint string
	protocol string
}

func (f *otlpFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.endpoint, "otlp", "", what+" as OpenTelemetry traces to the collector at `URL`, e.g. http://127.0.0.1:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&f.protocol, "otlp-protocol", "", "`PROTOCOL` of --otlp: http/protobuf, the only one built in (default $OTEL_EXPORTER_OTLP_PROTOCOL)")
}

// config resolves the flags and the standard variables. ok is false when
// neither names a collector. Without --otlp the exporters read the endpoint
// variables themselves; headers, TLS, timeout and compression always come
// from the OTEL_EXPORTER_OTLP_* variables.
func (f *otlpFlags) config(c *cli) (cfg otelexport.Config, ok bool) {
	cfg = otelexport.Config{Endpoint: f.endpoint, Protocol: f.protocol, Getenv: c.getenv}
	if cfg.Protocol == "" {
		cfg.Protocol = firstEnv(c, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	return cfg, f.endpoint != "" || firstEnv(c, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// collector names where spans go, for messages.
func (f *otlpFlags) collector(c *cli) string {
	if f.endpoint != "" {
		return f.endpoint
	}
	return firstEnv(c, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
}

func firstEnv(c *cli, keys ...string) string {
	for _, k := range keys {
		if v := c.getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// otlpFromFlags starts streaming a session's ledger records to a collector
// when --otlp or the standard variables name one. It returns the hook for
// phases.LedgerOptions.OnRecord (nil when OTLP is off) and stop, to call
// once the Recorder has closed: stop exports what is left within
// otlpCloseGrace and says on stderr what the collector did not get. A bad
// endpoint is said once and the session carries on without OTLP: export
// never breaks a session.
func otlpFromFlags(ctx context.Context, c *cli, f *otlpFlags, shimID, server string, stderr io.Writer) (onRecord func(*phases.Record), stop func()) {
	cfg, ok := f.config(c)
	if !ok {
		return nil, func() {}
	}
	cfg.NoRetry = true // a live session drops and counts rather than holding its queue
	exp, err := otelexport.NewExporter(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "mcpshim: --otlp: %v; carrying on without it\n", err)
		return nil, func() {}
	}
	opts := otelexport.LiveOptions{}
	// Metrics only where a collector is named for them, not a traces-only
	// one, and not against the standard OTEL_METRICS_EXPORTER=none.
	metrics := (f.endpoint != "" || firstEnv(c, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != "") &&
		c.getenv("OTEL_METRICS_EXPORTER") != "none"
	if metrics {
		if mexp, err := otelexport.NewMetricExporter(ctx, cfg); err == nil {
			opts.Metrics, opts.Resource = mexp, otelexport.NewResource(server, shimID)
		}
	}
	live := otelexport.NewLive(exp, opts)
	return live.OnRecord, func() {
		ctx, cancel := context.WithTimeout(context.Background(), otlpCloseGrace)
		defer cancel()
		err := live.Close(ctx)
		if st := live.Stats(); st.Dropped > 0 || st.Failed > 0 || err != nil {
			why := st.LastError
			if why == "" && err != nil {
				why = err.Error()
			}
			fmt.Fprintf(stderr, "mcpshim: otlp %s: %d spans exported, %d not, %d records dropped by a full queue (%s); the ledger has them all\n",
				f.collector(c), st.Exported, st.Failed, st.Dropped, why)
		}
		if st := live.Stats(); st.MetricsError != "" {
			fmt.Fprintf(stderr, "mcpshim: otlp %s: metrics not exported (OTEL_METRICS_EXPORTER=none stops trying): %s\n", f.collector(c), st.MetricsError)
		}
	}
}
