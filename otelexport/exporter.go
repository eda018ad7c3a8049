package otelexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL spells them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

var (
	// ErrProtocol is an OTLP protocol other than http/protobuf and grpc.
	ErrProtocol = errors.New("unsupported OTLP protocol (want http/protobuf or grpc)")
	// ErrEndpoint is an endpoint that is not an http or https URL.
	ErrEndpoint = errors.New("OTLP endpoint must be an http:// or https:// URL")
)

// Config says where spans go. What it leaves empty the OTLP exporters read
// from the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS,
// _TIMEOUT, _CERTIFICATE, _COMPRESSION and their TRACES_ forms).
type Config struct {
	// Endpoint is the collector's base URL, read as OTEL_EXPORTER_OTLP_ENDPOINT
	// is: over HTTP, /v1/traces is appended to its path. http:// means no TLS.
	Endpoint string
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC.
	Protocol string
	// Timeout bounds one export; 0 keeps the exporter's default (10s).
	Timeout time.Duration
	// NoRetry fails an export at once instead of retrying with backoff: the
	// live exporter would rather drop than hold its queue.
	NoRetry bool
}

// NewExporter returns the OTLP span exporter cfg describes. It does not
// connect: a collector that is down shows as export errors.
func NewExporter(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	switch cfg.Protocol {
	case "", ProtocolHTTP:
		var opts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(signalURL(cfg.Endpoint, "traces")))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlptracehttp.WithTimeout(cfg.Timeout))
		}
		if cfg.NoRetry {
			opts = append(opts, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		}
		exp, err := otlptracehttp.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("otlp http exporter: %w", err)
		}
		return exp, nil
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(cfg.Timeout))
		}
		if cfg.NoRetry {
			opts = append(opts, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("otlp grpc exporter: %w", err)
		}
		return exp, nil
	}
	return nil, fmt.Errorf("protocol %q: %w", cfg.Protocol, ErrProtocol)
}

// NewMetricExporter returns the OTLP metric exporter cfg describes, for the
// mcp.server.operation.duration histogram of a live session.
func NewMetricExporter(ctx context.Context, cfg Config) (sdkmetric.Exporter, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	switch cfg.Protocol {
	case "", ProtocolHTTP:
		var opts []otlpmetrichttp.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(signalURL(cfg.Endpoint, "metrics")))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlpmetrichttp.WithTimeout(cfg.Timeout))
		}
		if cfg.NoRetry {
			opts = append(opts, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
		}
		exp, err := otlpmetrichttp.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("otlp http metric exporter: %w", err)
		}
		return exp, nil
	case ProtocolGRPC:
		var opts []otlpmetricgrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(cfg.Endpoint))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlpmetricgrpc.WithTimeout(cfg.Timeout))
		}
		if cfg.NoRetry {
			opts = append(opts, otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}))
		}
		exp, err := otlpmetricgrpc.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("otlp grpc metric exporter: %w", err)
		}
		return exp, nil
	}
	return nil, fmt.Errorf("protocol %q: %w", cfg.Protocol, ErrProtocol)
}

func (cfg *Config) check() error {
	if cfg.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: %w", cfg.Endpoint, ErrEndpoint)
	}
	return nil
}

// signalURL appends a signal's path (v1/traces, v1/metrics) to a base
// endpoint, as the OTLP spec does for OTEL_EXPORTER_OTLP_ENDPOINT; a URL that
// already names it is kept.
func signalURL(base, signal string) string {
	u, err := url.Parse(base)
	if err != nil || strings.HasSuffix(u.Path, "/v1/"+signal) {
		return base
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/" + signal
	return u.String()
}
