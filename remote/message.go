package remote

// This file is the bridge's whole view of JSON-RPC: everything else asks it.
// It reads with the protocol model's scanner (mcp.Peek, mcp.Member, mcp.ID).

import (
	"bytes"
	"encoding/json"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// message is what the bridge needs to know about one line.
type message struct {
	kind   mcp.Kind
	rawID  []byte // as the peer spelled it, for answers
	id     idKey  // as a value, for matching
	method string
	// name is params.name (tools/call, prompts/get) or params.uri
	// (resources/read): the Mcp-Name header of 2026-07-28.
	name string
	// version is the protocol version the request names: params._meta's on a
	// 2026-07-28 request, params.protocolVersion on initialize.
	version string
	// result is the raw result of a response.
	result []byte
	// parts are the elements of a batch.
	parts []message
}

func inspect(line []byte) message {
	return fromMsg(mcp.Peek(line))
}

func fromMsg(m mcp.Msg) message {
	msg := message{kind: m.Kind, rawID: m.RawID, id: m.ID, method: m.Method, result: m.Result}
	for _, e := range m.Batch {
		msg.parts = append(msg.parts, fromMsg(e))
	}
	switch msg.method {
	case mcp.MethodCallTool, mcp.MethodGetPrompt:
		msg.name = mcp.String(mcp.Member(m.Params, "name"))
	case mcp.MethodReadResource:
		msg.name = mcp.String(mcp.Member(m.Params, "uri"))
	}
	if msg.method == mcp.MethodInitialize {
		msg.version = mcp.String(mcp.Member(m.Params, "protocolVersion"))
	} else if meta := mcp.Member(m.Params, "_meta"); meta != nil {
		msg.version = mcp.String(mcp.Member(meta, mcp.MetaProtocolVersion))
	}
	return msg
}

// each calls f for m, or for each element of a batch.
func (m message) each(f func(message)) {
	if m.kind != mcp.Batch {
		f(m)
		return
	}
	for _, p := range m.parts {
		f(p)
	}
}

func (m message) isResult() bool { return m.kind == mcp.Response }
func (m message) isBatch() bool  { return m.kind == mcp.Batch }

// hasID reports whether m carries an id a request can be matched by (not
// absent, not null).
func (m message) hasID() bool { return !m.id.IsZero() && !m.id.IsNull() }

// tapMsg is what the tracker's mcp.Line carries for a line of which it
// keeps data (a prefix, or all of it).
func tapMsg(line, data []byte) mcp.Msg {
	var sc mcp.Scanner
	sc.Write(line)
	return sc.Msg(data)
}

func (m message) isRequest() bool { return m.kind == mcp.Request }
func (m message) isNoise() bool   { return m.kind == mcp.Noise }
func (m message) isResponse() bool {
	return m.kind == mcp.Response || m.kind == mcp.ErrorResponse
}

// negotiated is the protocolVersion of an initialize result.
func (m message) negotiated() string {
	return mcp.String(mcp.Member(m.result, "protocolVersion"))
}

// idKey is a request id as a value: 7, 7.0 and 7e0 are one id, "7" another,
// and "\u0037" is "7" (mcp.ID). The zero idKey is no id.
type idKey = mcp.ID

// keyOf is the id a raw token spells; the zero idKey when it spells none.
func keyOf(raw []byte) idKey {
	id, _ := mcp.ParseID(bytes.TrimSpace(raw))
	return id
}

// stringID is the id of the string s: the shim's own ids.
func stringID(s string) idKey { return mcp.StringID(s) }

// withID returns the message line with its id replaced (the shim's own
// replay of the client's initialize). It re-encodes: the line is the
// shim's, not the client's.
func withID(line []byte, id string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, err
	}
	obj["id"], _ = json.Marshal(id)
	return json.Marshal(obj)
}

// serverErrorCode is the code of every error the bridge answers itself, as
// the stdio supervisor's: outside JSON-RPC's reserved range, so that it
// cannot be mistaken for the server's own (mcp.CodeServerGone).
const serverErrorCode = mcp.CodeServerGone

// errorAnswer is the JSON-RPC error the shim owes the client for id.
func errorAnswer(rawID []byte, text string, data map[string]any) []byte {
	type rpcError struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data,omitempty"`
	}
	id := json.RawMessage(rawID)
	if !json.Valid(id) {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{serverErrorCode, text, data}})
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-31000,"message":"mcpshim: internal error"}}`)
	}
	return b
}

// oneLine makes a JSON body one line for the client: a body that already is
// one line passes unchanged; a multi-line one is compacted (whitespace
// between tokens only; strings keep their bytes). ok is false for a body
// that is not JSON.
func oneLine(body []byte) (line []byte, ok bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	body = bytes.TrimLeft(body, " \t\r\n")
	if !bytes.ContainsAny(body, "\r\n") {
		return body, json.Valid(body)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, body) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}
