package remote

// Mcp-Param-* headers (2026-07-28, SEP-2243): a tool's input schema may mark
// a parameter with "x-mcp-header": NAME, and the client "MUST" mirror its
// value into the header Mcp-Param-NAME of each tools/call, so that a load
// balancer can route without reading the body; a tool whose declarations are
// invalid "MUST" be rejected (it is dropped from the list the client sees).
// The bridge is the HTTP client, so both are its own.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// paramHeader is one mirrored parameter.
type paramHeader struct{ param, header string }

// toolHeaders reads a tool's x-mcp-header declarations; a non-empty reason
// says why the tool is invalid: an empty or non-token name, a duplicate
// (case-insensitive), or a parameter that is not a string, an integer or a
// boolean.
func toolHeaders(tool json.RawMessage) (name string, hs []paramHeader, reason string) {
	var t struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(tool, &t) != nil {
		return "", nil, ""
	}
	seen := map[string]bool{}
	for param, prop := range t.InputSchema.Properties {
		raw, ok := prop["x-mcp-header"]
		if !ok {
			continue
		}
		var h, typ string
		if json.Unmarshal(raw, &h) != nil || !isToken(h) {
			return t.Name, nil, fmt.Sprintf("x-mcp-header %s of %s is not a header name", raw, param)
		}
		json.Unmarshal(prop["type"], &typ)
		if typ != "string" && typ != "integer" && typ != "boolean" {
			return t.Name, nil, fmt.Sprintf("x-mcp-header %s is on %s, of type %q (only string, integer, boolean)", h, param, typ)
		}
		if seen[strings.ToLower(h)] {
			return t.Name, nil, fmt.Sprintf("x-mcp-header %s is declared twice", h)
		}
		seen[strings.ToLower(h)] = true
		hs = append(hs, paramHeader{param, h})
	}
	return t.Name, hs, ""
}

// isToken reports whether s is an RFC 9110 token: a header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// filterTools takes the tools/list result of a 2026-07-28 session: it
// remembers each valid tool's headers and returns the result without the
// invalid tools (nil when every tool is valid).
func (b *bridge) filterTools(result []byte) []byte {
	var r map[string]json.RawMessage
	var tools []json.RawMessage
	if json.Unmarshal(result, &r) != nil || json.Unmarshal(r["tools"], &tools) != nil {
		return nil
	}
	kept := tools[:0:0]
	var dropped []string
	b.mu.Lock()
	if b.paramHeaders == nil {
		b.paramHeaders = map[string][]paramHeader{}
	}
	for _, tool := range tools {
		name, hs, reason := toolHeaders(tool)
		if reason != "" {
			dropped = append(dropped, name)
			b.mu.Unlock()
			b.emit(phases.Discovery, phases.ToolDropped, ledger.F(phases.FieldTool, name), ledger.F(phases.FieldReason, reason))
			b.mu.Lock()
			continue
		}
		b.paramHeaders[name] = hs
		kept = append(kept, tool)
	}
	b.mu.Unlock()
	if len(dropped) == 0 {
		return nil
	}
	b.say("dropped %d tool(s) whose x-mcp-header declarations are invalid: %s", len(dropped), strings.Join(dropped, ", "))
	r["tools"], _ = json.Marshal(kept)
	out, _ := json.Marshal(r)
	return out
}

// withResult returns the response line with its result replaced.
func withResult(line, result []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m["result"] = result
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return out
}

// setParamHeaders mirrors a tools/call's arguments into its Mcp-Param-*
// headers: a string as it is when it is printable ASCII without leading or
// trailing whitespace, else as =?base64?…?=; an integer or a boolean as its
// JSON text; a null or absent one not at all.
func (b *bridge) setParamHeaders(req *http.Request, line []byte, tool string) {
	b.mu.Lock()
	hs := b.paramHeaders[tool]
	b.mu.Unlock()
	if len(hs) == 0 {
		return
	}
	var call struct {
		Params struct {
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &call) != nil {
		return
	}
	for _, h := range hs {
		raw := bytes.TrimSpace(call.Params.Arguments[h.param])
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		v := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			v = s
			if !plainHeaderValue(s) {
				v = "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
			}
		}
		req.Header.Set("Mcp-Param-"+h.header, v)
	}
}

func plainHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return s == strings.TrimSpace(s)
}
