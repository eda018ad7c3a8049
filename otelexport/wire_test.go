package otelexport

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// sameMessage fails the test unless got equals want, showing both.
func sameMessage(t *testing.T, want, got proto.Message) {
	t.Helper()
	if !proto.Equal(want, got) {
		opts := prototext.MarshalOptions{Multiline: true}
		t.Errorf("decoded request\ngot:\n%s\nwant:\n%s", opts.Format(got), opts.Format(want))
	}
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// The hand-written request decodes, with the collector's generated types, to
// exactly the message the generated types would have built.
func TestTracesRequestDecodes(t *testing.T) {
	t0 := time.Unix(1700000000, 123456789)
	res := NewResource(nil, "rates", "shim_1")
	run := TraceID("run_1")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true})
	spans := []*Span{{
		Name:        "tools/call get_rate",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: run, SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled}),
		Parent:      remote,
		SpanKind:    trace.SpanKindServer,
		StartTime:   t0, EndTime: t0.Add(time.Millisecond),
		Attributes: []attribute.KeyValue{attribute.String("s", "x"), attribute.String("empty", ""), attribute.Bool("f", false),
			attribute.Int64("zero", 0), attribute.Int64("neg", -5), attribute.Float64("pi", 3.5), attribute.StringSlice("l", []string{"a", ""}),
			attribute.Int64Slice("il", []int64{1, 0})},
		Events:        []Event{{Name: "stdout_noise", Time: t0, Attributes: []attribute.KeyValue{attribute.String("k", "v")}}},
		Links:         []Link{{SpanContext: rootContext("run_1"), Attributes: []attribute.KeyValue{attribute.String("mcpshim.link", "run")}}},
		Status:        Status{Code: codes.Error, Description: "boom"},
		DroppedEvents: 3,
		Resource:      res,
	}, {
		Name:        "run rates",
		SpanContext: rootContext("run_1"),
		SpanKind:    trace.SpanKindInternal,
		StartTime:   t0, EndTime: t0,
		Resource: res,
	}}
	var got collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(tracesRequest(spans), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	anyv := func(v *commonpb.AnyValue) *commonpb.AnyValue { return v }
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: anyv(v)}
	}
	arr := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	sv := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	iv := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	rootSID := RootSpanID("run_1")
	want := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "mcpshim"), str("mcpshim.server", "rates"), str("service.instance.id", "shim_1")}},
		SchemaUrl: SchemaURL,
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: ScopeName}, SchemaUrl: SchemaURL,
			Spans: []*tracepb.Span{{
				TraceId: run[:], SpanId: []byte{9, 0, 0, 0, 0, 0, 0, 0}, ParentSpanId: []byte{2, 0, 0, 0, 0, 0, 0, 0},
				Name: "tools/call get_rate", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: uint64(t0.UnixNano()), EndTimeUnixNano: uint64(t0.Add(time.Millisecond).UnixNano()),
				Attributes: []*commonpb.KeyValue{str("s", "x"), str("empty", ""),
					kv("f", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}}), kv("zero", iv(0)), kv("neg", iv(-5)),
					kv("pi", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 3.5}}), kv("l", arr(sv("a"), sv(""))), kv("il", arr(iv(1), iv(0)))},
				Events:             []*tracepb.Span_Event{{TimeUnixNano: uint64(t0.UnixNano()), Name: "stdout_noise", Attributes: []*commonpb.KeyValue{str("k", "v")}}},
				DroppedEventsCount: 3,
				Links: []*tracepb.Span_Link{{TraceId: run[:], SpanId: rootSID[:], Attributes: []*commonpb.KeyValue{str("mcpshim.link", "run")},
					Flags: uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
				Flags:  uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK),
			}, {
				TraceId: run[:], SpanId: rootSID[:], Name: "run rates", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
				StartTimeUnixNano: uint64(t0.UnixNano()), EndTimeUnixNano: uint64(t0.UnixNano()),
				Status: &tracepb.Status{}, Flags: uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK),
			}},
		}},
	}}}
	sameMessage(t, want, &got)
}

func TestMetricsRequestDecodes(t *testing.T) {
	h := newHistogram(durationName, durationDesc)
	set := attribute.NewSet(attribute.String("mcp.method.name", "tools/call"))
	var sum float64
	for _, v := range []float64{0.005, 0.01, 0.3, 400} {
		h.record(v, set)
		sum += v
	}
	now := h.start.Add(time.Second)
	var got collectormetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(metricsRequest([]*histogram{h}, NewResource(nil, "rates", ""), now), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	lo, hi := 0.005, 400.0
	counts := make([]uint64, len(durationBuckets)+1)
	counts[0], counts[5], counts[len(durationBuckets)] = 2, 1, 1 // (−∞, 0.01], (0.2, 0.5], (300, +∞)
	want := &collectormetrics.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "mcpshim"), str("mcpshim.server", "rates")}},
		SchemaUrl: SchemaURL,
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope: &commonpb.InstrumentationScope{Name: ScopeName}, SchemaUrl: SchemaURL,
			Metrics: []*metricspb.Metric{{Name: durationName, Description: durationDesc, Unit: "s",
				Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
					DataPoints: []*metricspb.HistogramDataPoint{{
						Attributes:        []*commonpb.KeyValue{str("mcp.method.name", "tools/call")},
						StartTimeUnixNano: uint64(h.start.UnixNano()), TimeUnixNano: uint64(now.UnixNano()),
						Count: 4, Sum: &sum, Min: &lo, Max: &hi, BucketCounts: counts, ExplicitBounds: durationBuckets,
					}},
				}}}},
		}},
	}}}
	sameMessage(t, want, &got)
}

// statusMessage reads the message of the google.rpc.Status a collector
// answers a refusal with, past the fields before it, and nothing else.
func TestStatusMessage(t *testing.T) {
	status := stringField(varintField(nil, 1, 8), 2, "quota exceeded") // code RESOURCE_EXHAUSTED, message
	withDetails := bytesField(status, 3, []byte{1, 2, 3})
	for _, c := range []struct {
		body []byte
		want string
	}{
		{status, ": quota exceeded"},
		{withDetails, ": quota exceeded"},
		{fixed64Field(status[:0:0], 4, 7), ""},
		{[]byte("<html>bad gateway</html>"), ""},
		{nil, ""},
	} {
		if got := statusMessage(c.body); got != c.want {
			t.Errorf("statusMessage(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}
