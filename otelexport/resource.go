package otelexport

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Identity is what a resource says of the shim whose records it exports.
type Identity struct {
	// Version is service.version: the shim's version.
	Version string
	// Self adds process.pid and process.executable.name of this process:
	// a live session's shim. A batch export reads ledgers another shim wrote.
	Self bool
}

// BaseResource is the resource every span starts from, as the OpenTelemetry
// SDKs build theirs: service.name (mcpshim), service.version, host.name and,
// for a live session, the shim's process.pid and process.executable.name;
// then OTEL_RESOURCE_ATTRIBUTES over them and OTEL_SERVICE_NAME over
// service.name ("OTEL_SERVICE_NAME ... If service.name is also provided in
// OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME takes precedence").
// getenv nil is os.Getenv.
func BaseResource(id Identity, getenv func(string) string) []attribute.KeyValue {
	if getenv == nil {
		getenv = os.Getenv
	}
	attrs := []attribute.KeyValue{semconv.ServiceNameKey.String("mcpshim")}
	if id.Version != "" {
		attrs = append(attrs, semconv.ServiceVersionKey.String(id.Version))
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		attrs = append(attrs, semconv.HostNameKey.String(host))
	}
	if id.Self {
		attrs = append(attrs, semconv.ProcessPIDKey.Int(os.Getpid()))
		if exe, err := os.Executable(); err == nil {
			attrs = append(attrs, semconv.ProcessExecutableNameKey.String(filepath.Base(exe)))
		}
	}
	for _, kv := range envResource(getenv("OTEL_RESOURCE_ATTRIBUTES")) {
		attrs = put(attrs, kv)
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		attrs = put(attrs, semconv.ServiceNameKey.String(name))
	}
	return attrs
}

// envResource reads OTEL_RESOURCE_ATTRIBUTES: "key1=value1,key2=value2",
// values percent-encoded (W3C Baggage octets). A pair that does not parse is
// left out, as the SDKs do.
func envResource(s string) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			continue
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			continue
		}
		out = append(out, attribute.String(k, dv))
	}
	return out
}

// put sets kv in attrs, replacing an attribute of the same key.
func put(attrs []attribute.KeyValue, kv attribute.KeyValue) []attribute.KeyValue {
	for i := range attrs {
		if attrs[i].Key == kv.Key {
			attrs[i] = kv
			return attrs
		}
	}
	return append(attrs, kv)
}

// NewResource is base (BaseResource; nil is service.name=mcpshim alone) with
// the run's own: mcpshim.server, the server's label, and service.instance.id,
// the shim invocation. Those are the record's facts and win over base.
func NewResource(base []attribute.KeyValue, server, shim string) *Resource {
	if base == nil {
		base = []attribute.KeyValue{semconv.ServiceNameKey.String("mcpshim")}
	}
	attrs := put(append([]attribute.KeyValue(nil), base...), attribute.String(FieldPrefix+"server", server))
	if shim != "" {
		attrs = put(attrs, semconv.ServiceInstanceIDKey.String(shim))
	}
	return &Resource{Attributes: attrs}
}
