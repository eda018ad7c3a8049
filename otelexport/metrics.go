package otelexport

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The mcp.server.operation.duration histogram of the MCP semantic
// conventions: "MCP request or notification duration as observed on the
// receiver from the time it was received until the result or ack is sent",
// in seconds, with the conventions' advised bucket boundaries.
const (
	durationName = "mcp.server.operation.duration"
	durationDesc = "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."
)

// The mcp.server.session.duration histogram: "The duration of the MCP
// session as observed on the MCP server", the shim's session with its
// client, recorded once when it ends, with the same advised buckets.
const (
	sessionName = "mcp.server.session.duration"
	sessionDesc = "The duration of the MCP session as observed on the MCP server."
)

var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// durationKeys are the span attributes the histogram keeps: the
// low-cardinality ones the conventions list for it.
var durationKeys = map[attribute.Key]bool{semconv.McpMethodNameKey: true, semconv.ErrorTypeKey: true,
	semconv.GenAIToolNameKey: true, semconv.McpProtocolVersionKey: true, semconv.NetworkTransportKey: true,
	semconv.RPCResponseStatusCodeKey: true, semconv.GenAIOperationNameKey: true}

// histogram aggregates durations per attribute set, cumulatively from its
// start, as an explicit-bucket OTLP histogram. It is owned by one goroutine.
type histogram struct {
	name, desc string
	start      time.Time
	points     map[attribute.Distinct]*histPoint
}

type histPoint struct {
	attrs    attribute.Set
	counts   []uint64 // len(durationBuckets)+1
	count    uint64
	sum      float64
	min, max float64
}

func newHistogram(name, desc string) *histogram {
	return &histogram{name: name, desc: desc, start: time.Now(), points: map[attribute.Distinct]*histPoint{}}
}

// measure records the duration of each request the server answered (the
// server spans: a request the server sent the client is not its operation).
func (h *histogram) measure(spans []*Span) {
	for _, s := range spans {
		if s.SpanKind != trace.SpanKindServer {
			continue
		}
		kept := make([]attribute.KeyValue, 0, len(durationKeys))
		for _, kv := range s.Attributes {
			if durationKeys[kv.Key] {
				kept = append(kept, kv)
			}
		}
		h.record(s.EndTime.Sub(s.StartTime).Seconds(), attribute.NewSet(kept...))
	}
}

func (h *histogram) record(v float64, set attribute.Set) {
	p := h.points[set.Equivalent()]
	if p == nil {
		p = &histPoint{attrs: set, counts: make([]uint64, len(durationBuckets)+1), min: v, max: v}
		h.points[set.Equivalent()] = p
	}
	i := 0
	for i < len(durationBuckets) && v > durationBuckets[i] { // buckets are (lower, upper]
		i++
	}
	p.counts[i]++
	p.count++
	p.sum += v
	p.min, p.max = min(p.min, v), max(p.max, v)
}

// sorted is the points in a stable order, for a stable request.
func (h *histogram) sorted() []*histPoint {
	out := make([]*histPoint, 0, len(h.points))
	for _, p := range h.points {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *histPoint) int {
		return strings.Compare(a.attrs.Encoded(attribute.DefaultEncoder()), b.attrs.Encoded(attribute.DefaultEncoder()))
	})
	return out
}

// exportMetrics sends the histograms' state, if they have any.
func (e *Exporter) exportMetrics(ctx context.Context, hs []*histogram, res *Resource) error {
	body := metricsRequest(hs, res, time.Now())
	if body == nil {
		return nil
	}
	return e.post(ctx, body)
}
