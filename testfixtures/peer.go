package testfixtures

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Peers the fixtures can write like. The shim must not care how a server
// orders members or spells ids: real SDKs decode the request and encode the
// answer, and the bytes change while the values stay.
const (
	peerGo     = ""       // id first, the id echoed byte for byte (encoding/json of a RawMessage)
	peerTS     = "ts"     // the TypeScript SDK: {"result":…,"jsonrpc":"2.0","id":N}, ids through JSON.parse/JSON.stringify
	peerPython = "python" // the Python SDK: ids through json.loads/json.dumps (ensure_ascii)
)

// respell re-spells a raw id the way peer's JSON library writes the value
// it decoded.
func respell(id json.RawMessage, peer string) json.RawMessage {
	if peer == peerGo || len(id) == 0 {
		return id
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(id))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return id
	}
	switch v := v.(type) {
	case json.Number:
		return json.RawMessage(respellNumber(string(v), peer))
	case string:
		return json.RawMessage(respellString(v, peer))
	}
	return id
}

func respellNumber(n, peer string) string {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return n
	}
	isInt := !strings.ContainsAny(n, ".eE")
	switch peer {
	case peerTS:
		// JSON.stringify(Number): integers plain, others shortest round-trip.
		return strconv.FormatFloat(f, 'f', -1, 64)
	case peerPython:
		if isInt {
			return n // Python ints stay ints
		}
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0" // repr(100.0)
		}
		return s
	}
	return n
}

func respellString(s, peer string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
			b.WriteString(strconv.FormatInt(int64(r)&15, 16))
		case peer == peerPython && r >= utf8.RuneSelf:
			// ensure_ascii: every non-ASCII character as \uXXXX (surrogate pairs above the BMP).
			if r > 0xFFFF {
				r -= 0x10000
				b.WriteString(`\u` + hex4(0xD800+(r>>10)) + `\u` + hex4(0xDC00+(r&0x3FF)))
				continue
			}
			b.WriteString(`\u` + hex4(r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func hex4(r rune) string {
	s := strconv.FormatInt(int64(r), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

// tsResponse is a response as the TypeScript SDK serializes it: the id last.
type tsResponse struct {
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
}

// missingMeta is what go-sdk answers a 2026-07-28 request that lacks a
// required _meta field: "A request missing any required field is
// malformed; the server MUST reject it with JSON-RPC error code -32602".
// "" when params are complete or not of the modern era.
func missingMeta(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return ""
	}
	var v string
	if json.Unmarshal(p.Meta[metaProtocolVersion], &v) != nil || v < modernVersion {
		return ""
	}
	var caps map[string]any
	if json.Unmarshal(p.Meta["io.modelcontextprotocol/clientCapabilities"], &caps) != nil || caps == nil {
		return `missing or invalid _meta field "io.modelcontextprotocol/clientCapabilities"`
	}
	return ""
}
