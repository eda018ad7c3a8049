package report

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends a run as the ledger's --json shows it: r's fields, then
// "short" (its short id), indented as json.MarshalIndent does with an indent
// of "  " and a prefix of depth times that (a run in a document's list is at
// depth 2). It writes from Run's field list instead of through encoding/json's
// reflection, which at 17 µs a run took a million runs' --json 17 s.
// TestAppendJSON holds it to encoding/json byte for byte.
func AppendJSON(dst []byte, r *Run, short string, depth int) ([]byte, error) {
	return appendObject(dst, r, runFields(), depth, &short)
}

// UnsupportedFloatError is the error encoding/json gives for NaN and ±Inf,
// which JSON cannot hold.
type UnsupportedFloatError struct{ Value float64 }

func (e *UnsupportedFloatError) Error() string {
	return "json: unsupported value: " + strconv.FormatFloat(e.Value, 'g', -1, 64)
}

// appendObject writes the fields ls of r as an object; short, when not nil,
// is its last field.
func appendObject(dst []byte, r *Run, ls []leaf, depth int, short *string) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	for i := range ls {
		l := &ls[i]
		if l.omitEmpty && l.empty(r) || l.omitZero && l.zero(r) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = newline(dst, depth+1)
		dst = append(dst, l.name...)
		var err error
		if dst, err = l.appendValue(dst, r, depth+1); err != nil {
			return dst, err
		}
	}
	if short != nil {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = newline(dst, depth+1)
		dst = appendString(append(dst, `"short": `...), *short)
	}
	if !first {
		dst = newline(dst, depth)
	}
	return append(dst, '}'), nil
}

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

func (l *leaf) appendValue(dst []byte, r *Run, depth int) ([]byte, error) {
	switch l.kind {
	case kString:
		return appendString(dst, *at[string](r, l)), nil
	case kInt:
		return strconv.AppendInt(dst, int64(*at[int](r, l)), 10), nil
	case kBool:
		return strconv.AppendBool(dst, *at[bool](r, l)), nil
	case kFloat:
		return appendFloat(dst, *at[float64](r, l))
	case kIntPtr:
		if p := *at[*int](r, l); p != nil {
			return strconv.AppendInt(dst, int64(*p), 10), nil
		}
		return append(dst, "null"...), nil
	case kStrings:
		list := *at[[]string](r, l)
		if list == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, s := range list {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = appendString(dst, s)
		}
		if len(list) > 0 {
			dst = newline(dst, depth)
		}
		return append(dst, ']'), nil
	case kTime:
		dst = append(dst, '"')
		dst, err := at[time.Time](r, l).AppendText(dst)
		return append(dst, '"'), err
	}
	return appendObject(dst, r, l.children, depth, nil)
}

// appendFloat writes f as encoding/json does: like ES6, 'e' below 1e-6 and
// from 1e21, with e-09 cleaned to e-9.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, &UnsupportedFloatError{f}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst, nil
}

// appendString writes s as a JSON string as encoding/json does with HTML
// escaping: <, > and & as \u003c…, invalid UTF-8 as \ufffd, U+2028 and
// U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
