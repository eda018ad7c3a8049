package otelexport

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// resource is the resource of server's runs under shim, made once per pair.
func (m *Mapper) resource(server, shim string) *Resource {
	key := [2]string{server, shim}
	if res, ok := m.resources[key]; ok {
		return res
	}
	res := NewResource(m.base, server, shim)
	m.resources[key] = res
	return res
}

func addAttrs(s *Span, kv ...attribute.KeyValue) {
	s.Attributes = append(s.Attributes, kv...)
}

func setStatus(s *Span, st status) {
	if st.errType == "" {
		return
	}
	s.Status = Status{Code: codes.Error, Description: st.desc}
	addAttrs(s, semconv.ErrorTypeKey.String(st.errType))
}

// backdate is when the operation e answers began: latency_ms before it.
func backdate(e *ledger.Entry) time.Time {
	ms, ok := e.Float(phases.FieldLatencyMS)
	if !ok {
		return e.Time
	}
	return e.Time.Add(-time.Duration(ms * float64(time.Millisecond)))
}

func methodOf(e *ledger.Entry) string {
	switch e.Event {
	case phases.InitializeReceived, phases.InitializeResponded, phases.InitializeFailed:
		return mcp.MethodInitialize
	case phases.DiscoverReceived, phases.DiscoverResponded, phases.DiscoverFailed:
		return mcp.MethodDiscover
	case phases.ToolsListReceived, phases.ToolsListResponded, phases.ToolsListFailed:
		return mcp.MethodListTools
	case phases.ToolCallReceived, phases.ToolCallResponded, phases.ToolCallContinued,
		phases.ToolCallInputRequired, phases.ToolCallTaskCreated:
		return mcp.MethodCallTool
	}
	return e.Str(phases.FieldMethod)
}

func dirOf(e *ledger.Entry) string {
	if e.Str(phases.FieldDirection) == "server" {
		return "server"
	}
	return "client"
}

// merge is a's fields overridden by b's.
func merge(a, b map[string]any) map[string]any {
	if len(a) == 0 {
		return b
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// fieldAttrs turns ledger fields into mcpshim.FIELD attributes, in key order.
// Objects become JSON text; numbers stay integers when they are.
func fieldAttrs(fields map[string]any, skip map[string]bool) []attribute.KeyValue {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]attribute.KeyValue, 0, len(keys))
	for _, k := range keys {
		key := attribute.Key(FieldPrefix + k)
		switch v := fields[k].(type) {
		case string:
			out = append(out, key.String(v))
		case bool:
			out = append(out, key.Bool(v))
		case json.Number:
			if i, err := v.Int64(); err == nil {
				out = append(out, key.Int64(i))
			} else if f, err := v.Float64(); err == nil {
				out = append(out, key.Float64(f))
			}
		case []any:
			if strs, ok := stringList(v); ok {
				out = append(out, key.StringSlice(strs))
				continue
			}
			if b, err := json.Marshal(v); err == nil {
				out = append(out, key.String(string(b)))
			}
		case map[string]any:
			if b, err := json.Marshal(v); err == nil {
				out = append(out, key.String(string(b)))
			}
		}
	}
	return out
}

func stringList(l []any) ([]string, bool) {
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
