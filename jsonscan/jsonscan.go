// Package jsonscan reads JSON text without decoding it: whether a line is one
// valid JSON value, and where a value or a string ends. It answers as
// encoding/json does (FuzzValid holds it to json.Valid), in one pass and
// without allocating: the relay asks it of every line that looks like
// JSON-RPC, the ledger reader of every record. It knows nothing of what the
// JSON means.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// MaxDepth is encoding/json's nesting limit: deeper text is not valid.
const MaxDepth = 10000

// Valid reports whether b is exactly one JSON value, with white space around
// it allowed.
func Valid(b []byte) bool {
	end, ok := Value(b, SkipSpace(b, 0), 0)
	return ok && SkipSpace(b, end) == len(b)
}

// Value reads the JSON value starting at b[i], inside depth open objects and
// arrays, and returns the index just after it.
func Value(b []byte, i, depth int) (end int, ok bool) {
	var small [64]byte
	stack := small[:0] // '{' or '[' per container opened here
	for {
		// A value.
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth+len(stack) >= MaxDepth {
				return 0, false
			}
			stack = append(stack, c)
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = memberName(b, i); i < 0 {
					return 0, false
				}
			}
			continue
		case c == '"':
			if i, _, ok = String(b, i); !ok {
				return 0, false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = number(b, i); i < 0 {
				return 0, false
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return 0, false
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return 0, false
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return 0, false
			}
		default:
			return 0, false
		}
		// After a value: the end of the one asked for, a comma, or the end of
		// a container.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, false
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return 0, false
			}
			i = SkipSpace(b, i+1)
			if top == '{' {
				if i = memberName(b, i); i < 0 {
					return 0, false
				}
			}
			break
		}
	}
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// memberName reads `"name" :` at i and returns where its value starts, or -1.
func memberName(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	i, _, ok := String(b, i)
	if !ok {
		return -1
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return SkipSpace(b, i+1)
}

// String reads the string whose opening quote is b[i] and returns the index
// just after its closing quote. escaped reports whether its text differs from
// its bytes: it has escapes or bytes of 0x80 and above (which pass, as they do
// for encoding/json, and which a decoder may replace when they are not UTF-8).
func String(b []byte, i int) (end int, escaped, ok bool) {
	i++
	for {
		// Eight bytes at a time to the next one that needs a look.
		for i+8 <= len(b) {
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, false, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return 0, false, false
		case c >= 0x80:
			escaped = true
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false, false
					}
				}
				i += 4
			default:
				return 0, false, false
			}
		}
		i++
	}
}

// special marks the bytes of v (little-endian) that need a look: a quote, a
// backslash, a control byte, or 0x80 and above. The lowest mark is exact;
// marks above it may be false (Hacker's Delight 6-1: the high bit of
// (x - 0x01…) & ^x & 0x80… marks the zero bytes of x, and false marks only
// above a true one).
func special(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (v - 0x20*ones) & ^v & highs
	quote := v ^ '"'*ones
	backslash := v ^ '\\'*ones
	return control | (quote-ones)&^quote&highs | (backslash-ones)&^backslash&highs | v&highs
}

// plain marks the bytes a string holds as they are: printable ASCII but the
// quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i and
// returns where it ends, or -1.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}
