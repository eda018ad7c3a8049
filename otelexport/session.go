package otelexport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// closeGrace is how long a session's end waits for the last spans to reach
// the collector: the client is gone, but its supervisor may be timing the
// shim's exit.
const closeGrace = 2 * time.Second

// Resolve completes cfg for the traces from the standard variables (the
// protocol, unless given). ok is false when neither cfg.Endpoint nor the
// variables name a collector for them. Without an Endpoint the exporters
// read the endpoint variables themselves; headers, TLS, timeout and
// compression always come from the OTEL_EXPORTER_OTLP_* variables.
//
// As the SDKs do, OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn
// off what the variables name; an Endpoint given (--otlp) is asked for and
// stays on.
func (cfg Config) Resolve() (Config, bool) {
	if cfg.Protocol == "" {
		cfg.Protocol = cfg.firstEnv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if cfg.Endpoint == "" && (cfg.sdkDisabled() || strings.TrimSpace(cfg.firstEnv("OTEL_TRACES_EXPORTER")) == "none") {
		return cfg, false
	}
	return cfg, cfg.Collector() != ""
}

// ResolveMetrics is Resolve for the metrics, a signal of their own: "
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: Endpoint URL for metric data only"
// (OTLP exporter configuration), so a metrics endpoint alone sends metrics
// and no traces, and a traces endpoint alone no metrics. OTEL_SDK_DISABLED
// turns them off as it does the traces; OTEL_METRICS_EXPORTER=none turns
// them off with --otlp too (a traces-only backend refuses them).
func (cfg Config) ResolveMetrics() (Config, bool) {
	if cfg.Protocol == "" {
		cfg.Protocol = cfg.firstEnv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if strings.TrimSpace(cfg.firstEnv("OTEL_METRICS_EXPORTER")) == "none" || cfg.Endpoint == "" && cfg.sdkDisabled() {
		return cfg, false
	}
	return cfg, cfg.Endpoint != "" || cfg.firstEnv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

func (cfg Config) sdkDisabled() bool {
	return strings.EqualFold(strings.TrimSpace(cfg.firstEnv("OTEL_SDK_DISABLED")), "true")
}

// StatePath is where ledger export remembers its progress in dir by
// default: a file per collector and protocol, so that two collectors each
// get every record.
func (cfg Config) StatePath(dir string) string {
	sum := sha256.Sum256([]byte(cfg.Collector() + " " + cfg.Protocol))
	return filepath.Join(dir, "otlp-export-"+hex.EncodeToString(sum[:4])+".json")
}

// Collector names where spans go, for messages.
func (cfg Config) Collector() string {
	if cfg.Endpoint != "" {
		return cfg.Endpoint
	}
	return cfg.firstEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
}

func (cfg Config) firstEnv(keys ...string) string {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range keys {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// StartSession streams a session's ledger records to the collectors cfg
// names, when it names one: the spans where the traces go, the duration
// histograms where the metrics go, each signal on its own. It returns the
// hook for ledger.Options.OnRecord (nil when OTLP is off) and stop, to call
// once the recorder has closed: stop exports what is left within closeGrace
// and says on stderr what a collector did not get. A bad endpoint is said
// once and the session carries on without that signal: export never breaks
// a session.
func StartSession(ctx context.Context, cfg Config, shimID, server string, stderr io.Writer) (onRecord func(*ledger.Record), stop func()) {
	cfg.NoRetry = true // a live session drops and counts rather than holding its queue
	tcfg, traces := cfg.Resolve()
	mcfg, metrics := cfg.ResolveMetrics()
	var exp, mexp *Exporter
	var err error
	if traces {
		if exp, err = NewExporter(ctx, tcfg); err != nil {
			fmt.Fprintf(stderr, "mcpshim: --otlp: %v; carrying on without it\n", err)
		}
	}
	if metrics {
		var merr error
		if mexp, merr = NewMetricExporter(ctx, mcfg); merr != nil && (err == nil || merr.Error() != err.Error()) {
			fmt.Fprintf(stderr, "mcpshim: otlp metrics: %v; carrying on without them\n", merr)
		}
	}
	if exp == nil && mexp == nil {
		return nil, func() {}
	}
	opts := LiveOptions{Base: BaseResource(Identity{Version: cfg.version(), Self: true}, cfg.Getenv), Full: cfg.Full}
	if mexp != nil {
		opts.Metrics, opts.Resource = mexp, NewResource(opts.Base, server, shimID)
	}
	live := NewLive(exp, opts)
	return live.OnRecord, func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		err := live.Close(ctx)
		if st := live.Stats(); exp != nil && (st.Dropped > 0 || st.Failed > 0 || err != nil) {
			why := st.LastError
			if why == "" && err != nil {
				why = err.Error()
			}
			fmt.Fprintf(stderr, "mcpshim: otlp %s: %d spans exported, %d not, %d records dropped by a full queue (%s); the ledger has them all\n",
				tcfg.Collector(), st.Exported, st.Failed, st.Dropped, why)
		}
		if st := live.Stats(); st.MetricsError != "" {
			fmt.Fprintf(stderr, "mcpshim: otlp %s: metrics not exported (OTEL_METRICS_EXPORTER=none stops trying): %s\n", mexp.url, st.MetricsError)
		}
	}
}
