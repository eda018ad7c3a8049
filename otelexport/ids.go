package otelexport

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// TraceID is the trace of a run: derived from the run id, so the live and the
// batch exporter agree and a re-export lands on the same trace.
func TraceID(run string) trace.TraceID {
	sum := sha256.Sum256([]byte("mcpshim/trace\x00" + run))
	var id trace.TraceID
	copy(id[:], sum[:])
	return id
}

// spanID names one span of a run; key says which (see the mapper).
func spanID(run, key string) trace.SpanID {
	sum := sha256.Sum256([]byte("mcpshim/span\x00" + run + "\x00" + key))
	var id trace.SpanID
	copy(id[:], sum[:])
	return id
}

// RootSpanID is the span id of a run's root span.
func RootSpanID(run string) trace.SpanID { return spanID(run, "run") }

// rootContext is the span context of a run's root span.
func rootContext(run string) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceID(run), SpanID: RootSpanID(run), TraceFlags: trace.FlagsSampled})
}

// parseTraceparent reads a W3C traceparent (version 00 layout; later versions
// may append fields). It returns an invalid context for anything else.
func parseTraceparent(s string) trace.SpanContext {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) ||
		len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return trace.SpanContext{}
	}
	if strings.ToLower(s) != s {
		return trace.SpanContext{}
	}
	tid, err := trace.TraceIDFromHex(parts[1])
	if err != nil {
		return trace.SpanContext{}
	}
	sid, err := trace.SpanIDFromHex(parts[2])
	if err != nil {
		return trace.SpanContext{}
	}
	flags, err := hex.DecodeString(parts[3])
	if err != nil {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
}
