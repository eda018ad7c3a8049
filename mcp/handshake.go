package mcp

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Implementation is a client's or a server's name and version: clientInfo
// and serverInfo of initialize, and the same under _meta in 2026-07-28.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Hello is what a server says of itself when a session starts: the answer
// to initialize, or to server/discover in 2026-07-28.
type Hello struct {
	// ProtocolVersion is the version initialize negotiated ("the server MUST
	// respond with the same version" it was asked for, or another it supports).
	ProtocolVersion string
	// SupportedVersions are the versions server/discover offers.
	SupportedVersions []string
	Capabilities      map[string]json.RawMessage
	ServerInfo        *Implementation // nil when the server did not say
}

// ParseInitializeResult reads the result of initialize. On an error the
// members that could be read are still returned.
func ParseInitializeResult(result []byte) (Hello, error) {
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      *Implementation            `json:"serverInfo"`
	}
	err := json.Unmarshal(result, &r)
	h := Hello{ProtocolVersion: r.ProtocolVersion, Capabilities: r.Capabilities, ServerInfo: r.ServerInfo}
	if err != nil {
		return h, fmt.Errorf("%s result: %w", MethodInitialize, err)
	}
	return h, nil
}

// ParseDiscoverResult reads the result of server/discover, whose serverInfo
// is in _meta. A serverInfo that cannot be read is left out, not an error.
func ParseDiscoverResult(result []byte) (Hello, error) {
	var r struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	err := json.Unmarshal(result, &r)
	h := Hello{SupportedVersions: r.SupportedVersions, Capabilities: r.Capabilities}
	var info Implementation
	if raw, ok := r.Meta[MetaServerInfo]; ok && json.Unmarshal(raw, &info) == nil {
		h.ServerInfo = &info
	}
	if err != nil {
		return h, fmt.Errorf("%s result: %w", MethodDiscover, err)
	}
	return h, nil
}

// Server is the server's name and version, empty when it did not say.
func (h *Hello) Server() Implementation {
	if h.ServerInfo == nil {
		return Implementation{}
	}
	return *h.ServerInfo
}

// CapabilityNames are the capabilities the server declared, sorted.
func (h *Hello) CapabilityNames() []string {
	out := make([]string, 0, len(h.Capabilities))
	for k := range h.Capabilities {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ToolsListChanged reports capabilities.tools.listChanged: the server sends
// notifications/tools/list_changed in a legacy session.
func (h *Hello) ToolsListChanged() bool {
	var tools struct {
		ListChanged bool `json:"listChanged"`
	}
	_ = json.Unmarshal(h.Capabilities["tools"], &tools)
	return tools.ListChanged
}

// InitializeParams reads the protocol version and the client an initialize
// request names.
func InitializeParams(params []byte) (version string, client Implementation) {
	var p struct {
		ProtocolVersion string         `json:"protocolVersion"`
		ClientInfo      Implementation `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ProtocolVersion, p.ClientInfo
}

// RequestMeta reads the protocol version and the client a 2026-07-28
// request names in its _meta; both are empty for a legacy request.
func RequestMeta(params []byte) (version string, client Implementation) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", Implementation{}
	}
	_ = json.Unmarshal(p.Meta[MetaProtocolVersion], &version)
	_ = json.Unmarshal(p.Meta[MetaClientInfo], &client)
	return version, client
}
