package otelexport

import (
	"encoding/binary"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP protobuf messages, written by hand in the protobuf wire format
// rather than with the generated message types: those bring the protobuf
// reflection runtime and its descriptors, 2.4 MB of every shim's binary and
// a fifth of its package init, for two messages written one way (and even
// protowire alone makes every process open and hash its own executable at
// init, in protobuf's internal/detrand). The field numbers are opentelemetry-proto's (trace/v1/trace.proto,
// metrics/v1/metrics.proto, common/v1/common.proto, resource/v1/resource.proto);
// the tests decode every request with the generated collector types, as a
// collector does.
//
// "ExportTraceServiceRequest ... repeated ResourceSpans resource_spans = 1"
// and TracesData has the same single field, likewise ExportMetricsServiceRequest
// and MetricsData: the body of an OTLP/HTTP request is one of those.

// The protobuf wire types used.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// fieldNum is a protobuf field number.
type fieldNum uint64

func tag(b []byte, num fieldNum, typ uint64) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|typ)
}

// OTLP enum and flag values used below.
const (
	spanFlagsHasIsRemote  = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	spanFlagsIsRemote     = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
	statusCodeError       = 2     // STATUS_CODE_ERROR
	temporalityCumulative = 2     // AGGREGATION_TEMPORALITY_CUMULATIVE
)

// message appends field num holding the message that enc appends.
func message(b []byte, num fieldNum, enc func([]byte) []byte) []byte {
	return bytesField(b, num, enc(nil))
}

func bytesField(b []byte, num fieldNum, v []byte) []byte {
	b = tag(b, num, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// stringField appends a non-empty string (proto3 omits the empty one).
func stringField(b []byte, num fieldNum, s string) []byte {
	if s == "" {
		return b
	}
	b = tag(b, num, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func varintField(b []byte, num fieldNum, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = tag(b, num, wireVarint)
	return binary.AppendUvarint(b, v)
}

func fixed64Field(b []byte, num fieldNum, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = tag(b, num, wireFixed64)
	return binary.LittleEndian.AppendUint64(b, v)
}

func fixed32Field(b []byte, num fieldNum, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = tag(b, num, wireFixed32)
	return binary.LittleEndian.AppendUint32(b, v)
}

// doubleField appends an optional double: present even when zero.
func doubleField(b []byte, num fieldNum, v float64) []byte {
	b = tag(b, num, wireFixed64)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// tracesRequest is the body of a /v1/traces request: spans grouped by
// resource, under the one instrumentation scope.
func tracesRequest(spans []*Span) []byte {
	var order []*Resource
	byRes := map[*Resource][]*Span{}
	for _, s := range spans {
		if _, ok := byRes[s.Resource]; !ok {
			order = append(order, s.Resource)
		}
		byRes[s.Resource] = append(byRes[s.Resource], s)
	}
	var b []byte
	for _, res := range order {
		b = message(b, 1, func(b []byte) []byte { // ResourceSpans
			b = message(b, 1, func(b []byte) []byte { return resourceWire(b, res) })
			b = message(b, 2, func(b []byte) []byte { // ScopeSpans
				b = message(b, 1, scopeWire)
				for _, s := range byRes[res] {
					b = message(b, 2, func(b []byte) []byte { return spanWire(b, s) })
				}
				return stringField(b, 3, SchemaURL)
			})
			return stringField(b, 3, SchemaURL)
		})
	}
	return b
}

func scopeWire(b []byte) []byte { return stringField(b, 1, ScopeName) } // InstrumentationScope.name

func resourceWire(b []byte, r *Resource) []byte {
	if r == nil {
		return b
	}
	return attrsWire(b, 1, r.Attributes) // Resource.attributes
}

func spanWire(b []byte, s *Span) []byte {
	sc := s.SpanContext
	tid, sid := sc.TraceID(), sc.SpanID()
	b = bytesField(b, 1, tid[:])
	b = bytesField(b, 2, sid[:])
	b = stringField(b, 3, sc.TraceState().String())
	if s.Parent.SpanID().IsValid() {
		psid := s.Parent.SpanID()
		b = bytesField(b, 4, psid[:])
	}
	b = stringField(b, 5, s.Name)
	b = varintField(b, 6, uint64(s.SpanKind)) // the API's numbering is the protocol's
	b = fixed64Field(b, 7, unixNano(s.StartTime))
	b = fixed64Field(b, 8, unixNano(s.EndTime))
	b = attrsWire(b, 9, s.Attributes)
	for _, ev := range s.Events {
		b = message(b, 11, func(b []byte) []byte { // Span.Event
			b = fixed64Field(b, 1, unixNano(ev.Time))
			b = stringField(b, 2, ev.Name)
			return attrsWire(b, 3, ev.Attributes)
		})
	}
	b = varintField(b, 12, uint64(s.DroppedEvents))
	for _, l := range s.Links {
		b = message(b, 13, func(b []byte) []byte { // Span.Link
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = bytesField(b, 1, ltid[:])
			b = bytesField(b, 2, lsid[:])
			b = stringField(b, 3, l.SpanContext.TraceState().String())
			b = attrsWire(b, 4, l.Attributes)
			return fixed32Field(b, 6, spanFlags(l.SpanContext))
		})
	}
	b = message(b, 15, func(b []byte) []byte { // Status
		if s.Status.Code != codes.Error {
			return b
		}
		b = stringField(b, 2, s.Status.Description)
		return varintField(b, 3, statusCodeError)
	})
	return fixed32Field(b, 16, spanFlags(s.Parent))
}

// spanFlags says whether the parent (or linked) context is remote: "bits
// 8 and 9 represent the 3 states of whether a span's parent is remote".
func spanFlags(sc trace.SpanContext) uint32 {
	f := uint32(spanFlagsHasIsRemote)
	if sc.IsRemote() {
		f |= spanFlagsIsRemote
	}
	return f
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// attrsWire appends each attribute as a KeyValue in field num.
func attrsWire(b []byte, num fieldNum, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = message(b, num, func(b []byte) []byte {
			b = stringField(b, 1, string(kv.Key))
			return message(b, 2, func(b []byte) []byte { return anyValueWire(b, kv.Value) })
		})
	}
	return b
}

// anyValueWire appends an AnyValue's one field. Its oneof is present even
// at the zero value, so the fields are written whatever they hold.
func anyValueWire(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		var x uint64
		if v.AsBool() {
			x = 1
		}
		b = tag(b, 2, wireVarint)
		return binary.AppendUvarint(b, x)
	case attribute.INT64:
		b = tag(b, 3, wireVarint)
		return binary.AppendUvarint(b, uint64(v.AsInt64())) // int64: two's complement, 10 bytes when negative
	case attribute.FLOAT64:
		return doubleField(b, 4, v.AsFloat64())
	case attribute.BOOLSLICE:
		return arrayWire(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return arrayWire(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return arrayWire(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return arrayWire(b, v.AsStringSlice(), attribute.StringValue)
	}
	return bytesField(b, 1, []byte(v.Emit()))
}

func arrayWire[T any](b []byte, xs []T, value func(T) attribute.Value) []byte {
	return message(b, 5, func(b []byte) []byte { // ArrayValue
		for _, x := range xs {
			b = message(b, 1, func(b []byte) []byte { return anyValueWire(b, value(x)) })
		}
		return b
	})
}

// metricsRequest is the body of a /v1/metrics request holding the
// histograms, each cumulative from its start; nil when nothing was measured.
func metricsRequest(hs []*histogram, res *Resource, now time.Time) []byte {
	var kept []*histogram
	for _, h := range hs {
		if len(h.points) > 0 {
			kept = append(kept, h)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return message(nil, 1, func(b []byte) []byte { // ResourceMetrics
		b = message(b, 1, func(b []byte) []byte { return resourceWire(b, res) })
		b = message(b, 2, func(b []byte) []byte { // ScopeMetrics
			b = message(b, 1, scopeWire)
			for _, h := range kept {
				b = message(b, 2, func(b []byte) []byte { // Metric
					b = stringField(b, 1, h.name)
					b = stringField(b, 2, h.desc)
					b = stringField(b, 3, "s")
					return message(b, 9, func(b []byte) []byte { // Histogram
						for _, p := range h.sorted() {
							b = message(b, 1, func(b []byte) []byte { return pointWire(b, p, h.start, now) })
						}
						return varintField(b, 2, temporalityCumulative)
					})
				})
			}
			return stringField(b, 3, SchemaURL)
		})
		return stringField(b, 3, SchemaURL)
	})
}

func pointWire(b []byte, p *histPoint, start, now time.Time) []byte {
	b = fixed64Field(b, 2, unixNano(start))
	b = fixed64Field(b, 3, unixNano(now))
	b = fixed64Field(b, 4, p.count)
	b = doubleField(b, 5, p.sum)
	var counts, bounds []byte // packed repeated fields
	for _, c := range p.counts {
		counts = binary.LittleEndian.AppendUint64(counts, c)
	}
	for _, x := range durationBuckets {
		bounds = binary.LittleEndian.AppendUint64(bounds, math.Float64bits(x))
	}
	b = bytesField(b, 6, counts)
	b = bytesField(b, 7, bounds)
	b = attrsWire(b, 9, p.attrs.ToSlice())
	b = doubleField(b, 11, p.min)
	return doubleField(b, 12, p.max)
}
