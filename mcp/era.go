package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Protocol revisions the shim tells apart.
const (
	// ModernVersion is the first revision without a handshake: every request
	// carries the protocol fields in _meta, and server/discover replaces initialize.
	ModernVersion = "2026-07-28"
	// LegacyVersion is the last revision with the initialize handshake.
	LegacyVersion = "2025-11-25"
)

// Reserved _meta keys of 2026-07-28 (basic/index, "Per-request protocol fields").
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Revisions are the protocol versions MCP has published. basic/lifecycle,
// "Version Negotiation": "If the server supports the requested protocol
// version, it MUST respond with the same version. Otherwise, the server MUST
// respond with another protocol version it supports." An answer with a
// version the client did not ask for and no revision has is neither.
var Revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", LegacyVersion, ModernVersion}

// IsRevision reports whether version is one of Revisions.
func IsRevision(version string) bool { return slices.Contains(Revisions, version) }

// IsModern reports whether version is 2026-07-28 or later (versions are dates).
func IsModern(version string) bool { return version >= ModernVersion }

// Era is the revision a client speaks and what the shim's own requests must
// carry to be taken for the client's. The zero Era is legacy with no handshake.
type Era struct {
	Version string
	Modern  bool
	// The client's own per-request fields, raw, repeated on the shim's requests.
	ClientInfo         json.RawMessage
	ClientCapabilities json.RawMessage
	LogLevel           json.RawMessage
}

// ModernEra reads the era of a client request from its params._meta: ok is
// false unless it carries a 2026-07-28 (or later) protocolVersion.
func ModernEra(params []byte) (e Era, ok bool) {
	meta := Member(params, "_meta")
	v := String(Member(meta, MetaProtocolVersion))
	if !IsModern(v) {
		return Era{}, false
	}
	keep := func(key string) json.RawMessage {
		if raw := Member(meta, key); raw != nil {
			return append(json.RawMessage(nil), raw...)
		}
		return nil
	}
	return Era{Version: v, Modern: true, ClientInfo: keep(MetaClientInfo),
		ClientCapabilities: keep(MetaClientCapabilities), LogLevel: keep(MetaLogLevel)}, true
}

// Params completes the params of a request the shim sends in this era.
// 2026-07-28: "fields marked as required MUST be included on every request"
// (protocolVersion and clientCapabilities), "A request missing any required
// field is malformed; the server MUST reject it with JSON-RPC error code
// -32602", and "Clients SHOULD include io.modelcontextprotocol/clientInfo on
// every request". Legacy requests carry no protocol _meta.
func (e Era) Params(params map[string]any) map[string]any {
	if !e.Modern {
		return params
	}
	if params == nil {
		params = map[string]any{}
	}
	caps := e.ClientCapabilities
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`) // required: none declared is an empty object
	}
	meta := map[string]any{MetaProtocolVersion: e.Version, MetaClientCapabilities: caps}
	if len(e.ClientInfo) > 0 {
		meta[MetaClientInfo] = e.ClientInfo
	}
	if len(e.LogLevel) > 0 {
		meta[MetaLogLevel] = e.LogLevel
	}
	params["_meta"] = meta
	return params
}

// Request builds one request line (without newline) of the shim's own,
// complete for the era.
func (e Era) Request(id ID, method string, params map[string]any) ([]byte, error) {
	p := e.Params(params)
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  map[string]any  `json:"params,omitempty"`
	}{"2.0", json.RawMessage(id.String()), method, p}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", method, err)
	}
	return b, nil
}

// RawRequest builds a request line from an id and params the client itself
// sent (a replayed initialize, a reopened subscription): they are passed on
// as they were.
func RawRequest(rawID []byte, method string, params []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"method":%q`, rawID, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// NotificationLine builds a notification line of the shim's own.
func NotificationLine(method string) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method))
}

// ToolsListChanged builds notifications/tools/list_changed; on a 2026-07-28
// subscription stream it names the stream: "the server MUST include
// io.modelcontextprotocol/subscriptionId in _meta so the client can
// correlate the notification with the originating subscription request".
// subscription is the listen request's raw id, nil for a legacy session.
func ToolsListChanged(subscription []byte) []byte {
	if subscription == nil {
		return NotificationLine(NotificationToolListChanged)
	}
	return []byte(`{"jsonrpc":"2.0","method":"` + NotificationToolListChanged + `","params":{"_meta":{"` +
		MetaSubscriptionID + `":` + string(subscription) + `}}}`)
}
