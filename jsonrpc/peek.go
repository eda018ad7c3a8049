// Package jsonrpc frames line-delimited JSON-RPC 2.0 and relays it byte for byte.
//
// Nothing here re-encodes a message: Peek finds the top-level members of a line
// in place, and the relay writes the bytes it read.
package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Kind is what a line turned out to be.
type Kind uint8

const (
	// Noise is a line that is not a JSON-RPC message.
	Noise Kind = iota
	// Request has a method and an id.
	Request
	// Notification has a method and no id.
	Notification
	// Response has an id and a result.
	Response
	// ErrorResponse has an id (possibly null) and an error.
	ErrorResponse
	// Batch is a JSON array of messages; see Msg.Batch.
	Batch
)

var kindNames = [...]string{"noise", "request", "notification", "response", "error", "batch"}

func (k Kind) String() string { return kindNames[k] }

// Msg is what Peek learned about one message. Its byte slices alias the line.
type Msg struct {
	Kind   Kind
	ID     []byte // the raw id token: `1` and `"1"` are different ids
	Method string
	Params []byte // raw members, nil when absent
	Result []byte
	Error  []byte
	Batch  []Msg // the elements of a Batch
	// Partial is set when the line ended (or was cut at the observation limit)
	// before the object closed: the members found so far are reported.
	Partial bool
	// Cut names the member whose value the line ended in, and CutValue is
	// what there is of that value: a long answer's result starts there.
	Cut      string
	CutValue []byte
}

// IsResponse reports whether m answers a request.
func (m *Msg) IsResponse() bool { return m.Kind == Response || m.Kind == ErrorResponse }

// Peek classifies one line (without its newline) by scanning its top-level
// members. It does not validate nested values: a line that looks like a
// message but is not valid JSON is caught by the caller's full parse when it
// needs one (see Valid). Peek never allocates for a single message.
func Peek(line []byte) Msg {
	line = trimSpace(line)
	if len(line) == 0 {
		return Msg{}
	}
	switch line[0] {
	case '{':
		return peekObject(line)
	case '[':
		return peekBatch(line)
	}
	return Msg{}
}

// Valid reports whether the line is one complete JSON value: the full parse
// that separates `[2026-07-23 16:48:43] INFO` from a batch.
func Valid(line []byte) bool { return json.Valid(line) }

func peekBatch(line []byte) Msg {
	m := Msg{Kind: Batch}
	i := skipWS(line, 1)
	if i < len(line) && line[i] == ']' {
		return Msg{} // an empty batch is not a message
	}
	for i < len(line) {
		end, ok := skipValue(line, i)
		if !ok {
			m.Partial = true
			if i < len(line) && line[i] == '{' {
				e := peekObject(line[i:])
				e.Partial = true
				m.Batch = append(m.Batch, e)
			}
			return m
		}
		e := peekObject(line[i:end])
		if e.Kind == Noise {
			return Msg{}
		}
		m.Batch = append(m.Batch, e)
		i = skipWS(line, end)
		if i >= len(line) {
			m.Partial = true
			return m
		}
		if line[i] == ']' {
			return m
		}
		if line[i] != ',' {
			return Msg{}
		}
		i = skipWS(line, i+1)
	}
	m.Partial = true
	return m
}

func peekObject(b []byte) Msg {
	var m Msg
	var version []byte
	var hasID bool
	i := skipWS(b, 1)
	for i < len(b) && b[i] != '}' {
		if b[i] != '"' {
			return Msg{}
		}
		kend, ok := skipString(b, i)
		if !ok {
			m.Partial = true
			break
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			m.Partial = i >= len(b)
			break
		}
		i = skipWS(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			m.Partial = true
			m.Cut, m.CutValue = string(key), b[i:]
			break
		}
		val := b[i:vend]
		switch string(key) {
		case "jsonrpc":
			version = val
		case "id":
			m.ID, hasID = val, true
		case "method":
			m.Method = unquote(val)
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			m.Error = val
		}
		i = skipWS(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	if i >= len(b) {
		m.Partial = true
	}
	if !bytes.Equal(version, []byte(`"2.0"`)) && !(m.Partial && version == nil) {
		return Msg{}
	}
	switch {
	case m.Method != "" && hasID:
		m.Kind = Request
	case m.Method != "":
		m.Kind = Notification
	case m.Error != nil && hasID:
		m.Kind = ErrorResponse
	case m.Result != nil && hasID:
		m.Kind = Response
	case m.Partial && hasID:
		// Cut before result or error: a large response whose id came first.
		m.Kind = Response
	default:
		return Msg{Partial: m.Partial}
	}
	return m
}

func unquote(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b[skipWS(b, 0):]
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
// It jumps from quote to quote (IndexByte is vectorised): long tool results
// are mostly string contents.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// skipValue returns the index after the value starting at b[i]. It matches
// brackets and strings only; the contents are checked by Valid when needed.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipString(b, j)
				if !ok {
					return len(b), false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	j := i
	for j < len(b) && !isWS(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i && j < len(b)
}

// Member returns the raw value of key in the JSON object obj, scanning only its
// top level. It is how the tracker reads params.name without decoding arguments.
func Member(obj []byte, key string) []byte {
	obj = trimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	i := skipWS(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend, ok := skipString(obj, i)
		if !ok {
			return nil
		}
		k := obj[i+1 : kend-1]
		i = skipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipWS(obj, i+1)
		vend, ok := skipValue(obj, i)
		if !ok {
			return nil
		}
		if string(k) == key {
			return obj[i:vend]
		}
		i = skipWS(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
	return nil
}

// FirstKey returns the first member name of the (possibly cut) object v, or "".
func FirstKey(v []byte) string {
	v = trimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return ""
	}
	i := skipWS(v, 1)
	if i >= len(v) || v[i] != '"' {
		return ""
	}
	end, ok := skipString(v, i)
	if !ok {
		return ""
	}
	return unquote(v[i:end])
}

// String returns the JSON string value v decoded, or "" when v is not a string.
func String(v []byte) string { return unquote(v) }
