// Package termsafe makes text that came from outside the shim (a server's
// stderr, previews, tool and server names, error messages, argv) safe to
// print on a person's terminal: nothing in it can move the cursor, erase a
// line, retitle the window or write the clipboard (OSC 52).
//
// Every C0 control (including ESC, CR and newline), DEL, every C1 control
// (U+0080–U+009F, and the raw bytes 0x80–0x9F of invalid UTF-8, which an
// 8-bit terminal reads as CSI, OSC, DCS…) and the Unicode bidirectional
// overrides, which reorder what the reader sees, are shown as Go-style
// escapes (\x1b, \r, \u009b, \u202e) instead of being emitted. A backslash
// is left as it is, so a literal "\x1b" in the input reads the same as an
// escaped ESC: the output is for reading, not for decoding.
//
// It knows nothing of MCP, the ledger or where the text is printed.
package termsafe

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// String returns s with every control shown visibly, the newline too, so a
// value can never start a line of its own. It returns s itself when there is
// nothing to escape.
func String(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++ // printable ASCII, the common case, without decoding runes
	}
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendEscaped(b, s[i:], false))
}

func appendEscaped(b []byte, s string, keepLines bool) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepLines && (r == '\n' || r == '\t'):
			b = append(b, byte(r))
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, hex[s[i]>>4], hex[s[i]&0xf])
		case unsafe(r, n):
			b = appendRune(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

const hex = "0123456789abcdef"

func appendRune(b []byte, r rune) []byte {
	switch r {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	if r < 0x80 {
		return append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
	}
	q := strconv.QuoteRuneToASCII(r) // '\u009b'
	return append(b, q[1:len(q)-1]...)
}

// unsafe reports whether the rune r (n bytes long) must not reach a terminal.
func unsafe(r rune, n int) bool {
	switch {
	case r < 0x20, r == 0x7f:
		return true
	case r == utf8.RuneError && n == 1: // a stray byte: 0x9b is CSI to an 8-bit terminal
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi
		return true
	}
	return false
}

// Writer passes text to w with every control but newline and tab shown
// visibly (a diff of a tab-indented config keeps its tabs). It is for
// outputs that have no colours of their own (probe, lock, wrap):
// each Write should be whole lines or whole values, as fmt.Fprintf writes, so
// that no UTF-8 sequence is split between two writes.
type Writer struct{ W io.Writer }

func (w Writer) Write(p []byte) (int, error) {
	safe := appendEscaped(make([]byte, 0, len(p)), string(p), true)
	if _, err := w.W.Write(safe); err != nil {
		return 0, err
	}
	return len(p), nil
}
