package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CodeServerGone is the code of the errors the shim answers with itself when
// the server cannot answer (it exited, is restarting, or never started).
//
// 2026-07-28 (basic/index): "-32000 to -32019 — legacy. ... new
// implementations SHOULD NOT use codes from this sub-range at all", the
// -32020..-32099 sub-range is the specification's own, and "New error codes
// for purposes not defined by this specification SHOULD be allocated outside
// the JSON-RPC reserved range (-32768 to -32000)". A server gone is local to
// the shim ("Implementations surfacing local errors ... should ensure they
// cannot be mistaken for errors received from the peer"): a code outside the
// reserved range, and the message names the shim.
const CodeServerGone = -31000

// ErrorLine builds the error response for the request whose id the
// client spelled raw.
func ErrorLine(raw []byte, code int, message string, data map[string]any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", raw, struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data,omitempty"`
	}{code, message, data}})
	if err != nil {
		// The id is not valid JSON: answer with null.
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, code, message))
	}
	return b
}

// ownIDPrefix starts the ids of requests the shim itself sends to a server
// (replayed handshakes, its own tools/list). A client request that uses one
// is answered by the shim, never forwarded: the answer would be swallowed.
const ownIDPrefix = "mcpshim-"

// OwnID is the id of the shim's own request number n of method.
func OwnID(n int, method string) ID {
	return StringID(fmt.Sprintf("%s%d-%s", ownIDPrefix, n, strings.ReplaceAll(method, "/", "-")))
}

// IsOwnID reports whether id is one the shim uses for its own requests,
// however the peer spelled it.
func IsOwnID(id ID) bool { return id.kind == stringID && strings.HasPrefix(id.s, ownIDPrefix) }

// Cancelled is the notifications/cancelled the shim sends the client for a
// request the server made and can no longer wait for (it died).
// 2025-11-25 (utilities/cancellation): "Either side can send a cancellation
// notification"; "requestId: The ID of the request to cancel".
func Cancelled(raw []byte, reason string) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", NotificationCancelled, struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}{raw, reason}})
	if err != nil {
		return nil
	}
	return b
}

// CodeUnsupportedProtocolVersion is 2026-07-28's UnsupportedProtocolVersionError:
// "If the server does not implement the requested version ... it MUST respond
// with an UnsupportedProtocolVersionError listing the versions it does support".
const CodeUnsupportedProtocolVersion = -32022

// IsModernError reports whether code is one 2026-07-28 defines (-32020
// HeaderMismatch, -32021 MissingRequiredClientCapability, -32022
// UnsupportedProtocolVersion): "a recognized modern JSON-RPC error ...
// identifies a modern server".
func IsModernError(code int) bool { return code <= -32020 && code >= -32022 }
