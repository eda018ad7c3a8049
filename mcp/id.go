package mcp

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ID is a JSON-RPC request id as a value: `1`, `1.0` and `1e0` are one id,
// `"é"` and `"\u00e9"` are one id, `"a/b"` and `"a\/b"` are one id, and a
// string never equals a number. IDs are comparable and usable as map keys.
//
// JSON-RPC 2.0: "The Server MUST reply with the same value in the Response
// object"; a peer that decodes and re-encodes the id (JSON.parse, json.loads)
// keeps the value, not the spelling.
type ID struct {
	kind idKind
	n    int64  // a number that is an integer of at most 18 digits
	s    string // a string's decoded value, or any other number's canonical form
}

type idKind uint8

const (
	noID idKind = iota
	nullID
	numberID
	stringID
)

// IsZero reports whether there is no id (a notification, or none was found).
func (id ID) IsZero() bool { return id.kind == noID }

// IsNull reports whether the id is JSON null (an error for an unparseable request).
func (id ID) IsNull() bool { return id.kind == nullID }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return id.kind == stringID }

// Str is a string id's decoded value, or "".
func (id ID) Str() string {
	if id.kind == stringID {
		return id.s
	}
	return ""
}

// String is the id in its canonical JSON spelling, for logs.
func (id ID) String() string {
	switch id.kind {
	case nullID:
		return "null"
	case numberID:
		if id.s == "" {
			return strconv.FormatInt(id.n, 10)
		}
		return id.s
	case stringID:
		return strconv.Quote(id.s)
	}
	return ""
}

// StringID is the id of the string s.
func StringID(s string) ID { return ID{kind: stringID, s: s} }

// ParseID reads a raw JSON id token. ok is false when raw is not a string,
// a number or null (JSON-RPC ids are nothing else).
func ParseID(raw []byte) (id ID, ok bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == '"':
		s, ok := unquoteBytes(raw)
		return ID{kind: stringID, s: s}, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return parseNumber(raw)
	case string(raw) == "null":
		return ID{kind: nullID}, true
	}
	return ID{}, false
}

// parseNumber canonicalizes a JSON number exactly (no float rounding): the
// significant digits without leading or trailing zeros and a decimal exponent.
func parseNumber(b []byte) (ID, bool) {
	if len(b) <= 18 && (b[0] != '0' || len(b) == 1) {
		// The common id: a plain integer.
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int64(c-'0')
		}
		if n >= 0 {
			return ID{kind: numberID, n: n}, true
		}
	}
	i, neg := 0, false
	if b[0] == '-' {
		neg, i = true, 1
	}
	var digits [40]byte
	nd, exp, trunc := 0, 0, false
	start := i
	var intDigits, fracDigits []byte
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	intDigits = b[start:i]
	if len(intDigits) == 0 {
		return ID{}, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == fs {
			return ID{}, false
		}
		fracDigits = b[fs:i]
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		es, e := i, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if e < 1e6 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == es {
			return ID{}, false
		}
		if eneg {
			e = -e
		}
		exp = e
	}
	if i != len(b) {
		return ID{}, false
	}
	for _, c := range intDigits {
		switch {
		case nd == 0 && c == '0':
		case nd < len(digits):
			digits[nd] = c
			nd++
		default:
			exp++ // a digit past the buffer: it scales what is kept
			trunc = trunc || c != '0'
		}
	}
	for _, c := range fracDigits {
		switch {
		case nd == 0 && c == '0':
			exp--
		case nd < len(digits):
			digits[nd] = c
			nd++
			exp--
		default:
			trunc = trunc || c != '0'
		}
	}
	if trunc {
		// More significant digits than any id needs: the spelling is the value.
		return ID{kind: numberID, s: "raw:" + string(b)}, true
	}
	for nd > 0 && digits[nd-1] == '0' {
		nd--
		exp++
	}
	if nd == 0 {
		return ID{kind: numberID}, true // 0, -0, 0.0, 0e5
	}
	if exp >= 0 && nd+exp <= 18 {
		var n int64
		for _, c := range digits[:nd] {
			n = n*10 + int64(c-'0')
		}
		for range exp {
			n *= 10
		}
		if neg {
			n = -n
		}
		return ID{kind: numberID, n: n}, true
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	sb.Write(digits[:nd])
	sb.WriteByte('e')
	sb.WriteString(strconv.Itoa(exp))
	return ID{kind: numberID, s: sb.String()}, true
}

// unquoteBytes decodes a JSON string token. Invalid UTF-8 is kept byte for
// byte, so two different ids never decode to one value.
func unquoteBytes(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	esc := -1
	for i, c := range v {
		if c == '\\' {
			esc = i
			break
		}
	}
	if esc < 0 {
		return string(v), true
	}
	out := make([]byte, 0, len(v))
	out = append(out, v[:esc]...)
	for i := esc; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(v) {
			return "", false
		}
		switch v[i] {
		case '"', '\\', '/':
			out = append(out, v[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(v[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(v[min(i+3, len(v)):]); ok && i+2 < len(v) && v[i+1] == '\\' && v[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}

// Int is a number id's value when it is an integer (`1`, `1.0`, `1e0`); a
// string id that spells an integer ("1") is taken too, as lenient peers
// expect: only the probe, which sends integer ids, reads answers this way.
func (id ID) Int() (int64, bool) {
	switch {
	case id.kind == numberID && id.s == "":
		return id.n, true
	case id.kind == stringID:
		n, err := strconv.ParseInt(id.s, 10, 64)
		return n, err == nil
	}
	return 0, false
}
