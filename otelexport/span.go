package otelexport

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Span is one finished span, as the Mapper builds it from ledger records and
// as OTLP carries it (see otlp.go). It uses the OpenTelemetry API's value
// types only: the SDK, which would add a tracer pipeline and its start-up
// cost to every shim, is not needed to describe a span that already ended.
type Span struct {
	Name          string
	SpanContext   trace.SpanContext
	Parent        trace.SpanContext // invalid for a root
	SpanKind      trace.SpanKind
	StartTime     time.Time
	EndTime       time.Time
	Attributes    []attribute.KeyValue
	Events        []Event
	Links         []Link
	Status        Status
	DroppedEvents int
	Resource      *Resource
}

// Event is a span event: a record that is not a span of its own.
type Event struct {
	Name       string
	Time       time.Time
	Attributes []attribute.KeyValue
}

// Link ties a span to another trace's span (the previous run, the run of a
// request that joined the agent's trace).
type Link struct {
	SpanContext trace.SpanContext
	Attributes  []attribute.KeyValue
}

// Status is a span's status; the mapper sets only Error.
type Status struct {
	Code        codes.Code
	Description string
}

// Resource is what emits a span, under the semantic conventions' schema.
type Resource struct {
	Attributes []attribute.KeyValue
}

// SchemaURL is the semantic conventions' schema of every resource and scope.
const SchemaURL = semconv.SchemaURL
