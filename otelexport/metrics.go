package otelexport

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// The mcp.server.operation.duration histogram of the MCP semantic
// conventions: "MCP request or notification duration as observed on the
// receiver from the time it was received until the result or ack is sent",
// in seconds, with the conventions' advised bucket boundaries.
const (
	durationName = "mcp.server.operation.duration"
	durationDesc = "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."
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
	start  time.Time
	points map[attribute.Distinct]*histPoint
}

type histPoint struct {
	attrs    attribute.Set
	counts   []uint64 // len(durationBuckets)+1
	count    uint64
	sum      float64
	min, max float64
}

func newHistogram() *histogram {
	return &histogram{start: time.Now(), points: map[attribute.Distinct]*histPoint{}}
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

// metricsData is the histogram's state now, cumulative; nil when empty.
func (h *histogram) metricsData(res *Resource) *metricspb.MetricsData {
	if len(h.points) == 0 {
		return nil
	}
	now := unixNano(time.Now())
	hist := &metricspb.Histogram{AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	for _, p := range h.points {
		sum, lo, hi := p.sum, p.min, p.max
		hist.DataPoints = append(hist.DataPoints, &metricspb.HistogramDataPoint{
			Attributes: keyValues(p.attrs.ToSlice()), StartTimeUnixNano: unixNano(h.start), TimeUnixNano: now,
			Count: p.count, Sum: &sum, Min: &lo, Max: &hi,
			BucketCounts: append([]uint64(nil), p.counts...), ExplicitBounds: durationBuckets,
		})
	}
	m := &metricspb.Metric{Name: durationName, Description: durationDesc, Unit: "s",
		Data: &metricspb.Metric_Histogram{Histogram: hist}}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: resourceProto(res), SchemaUrl: SchemaURL,
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope: &commonpb.InstrumentationScope{Name: ScopeName}, SchemaUrl: SchemaURL, Metrics: []*metricspb.Metric{m}}},
	}}}
}

// ExportMetrics sends the histogram's state, if it has any.
func (e *Exporter) exportMetrics(ctx context.Context, h *histogram, res *Resource) error {
	md := h.metricsData(res)
	if md == nil {
		return nil
	}
	return e.post(ctx, md)
}
