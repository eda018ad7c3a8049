package main

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// hostileText is every control a server could use against the reader's
// terminal: each C0 control but NUL and newline (an environment variable
// cannot hold NUL; a newline ends the line), DEL, the C1 controls as UTF-8
// and one raw 8-bit CSI, a bidi override, and the common sequences: OSC 52
// (write the clipboard), OSC 0 (retitle), CSI 2K and 1A (erase and climb a
// line, hiding the one above), DCS.
func hostileText() string {
	var b strings.Builder
	for c := byte(1); c < 0x20; c++ {
		if c != '\n' {
			b.WriteByte(c)
		}
	}
	b.WriteString("\x7f")
	for r := rune(0x80); r < 0xa0; r++ {
		b.WriteRune(r)
	}
	b.WriteString("\x9b2J \u202eevil\u202c \x1b]52;c;aGVsbG8=\x07 \x1b]0;pwned\x1b\\ \x1b[2K\x1b[1A \x1bP+q544e\x1b\\ end")
	return b.String()
}

// terminalControl finds the first byte or rune of out a terminal would act
// on, but newline and tab (which only move to the next tab stop): -1 when
// there is none.
func terminalControl(out string) int {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError && n == 1 || r >= 0x202a && r <= 0x202e {
			return i
		}
		i += n
	}
	return -1
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
