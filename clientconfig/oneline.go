package clientconfig

import "strings"

// A remote entry's original bytes ride in one argument (RemoteEntryFlag).
// Clients print an entry's args (`claude mcp get` shows Args), and a
// multi-line entry made a four-line Args, so the bytes are written on one
// line, reversibly: outside strings, a line feed becomes \n, a carriage
// return \r and a backslash \\. Inside a JSON string none of them is raw
// (line breaks must be escaped there), and outside one a backslash never
// stands in JSON; comments (JSONC) are tracked, since they may hold
// backslashes and quotes of their own.

// lexState is where a byte of a JSON(C) text is: in code, a string or a comment.
type lexState int

const (
	inCode lexState = iota
	inString
	inLineComment
	inBlockComment
)

// oneLine writes data, a JSON(C) value, on one line.
func oneLine(data []byte) string {
	var b strings.Builder
	st := inCode
	for i := 0; i < len(data); i++ {
		c := data[i]
		if st == inString {
			b.WriteByte(c)
			switch c {
			case '\\':
				if i+1 < len(data) {
					i++
					b.WriteByte(data[i])
				}
			case '"':
				st = inCode
			}
			continue
		}
		switch c {
		case '\n':
			b.WriteString(`\n`)
			if st == inLineComment {
				st = inCode
			}
			continue
		case '\r':
			b.WriteString(`\r`)
			continue
		case '\\':
			b.WriteString(`\\`)
			continue
		}
		b.WriteByte(c)
		st = next(st, prev(data, i), c)
	}
	return b.String()
}

// fromOneLine undoes oneLine.
func fromOneLine(line string) []byte {
	s := []byte(line)
	out := make([]byte, 0, len(s))
	st := inCode
	for i := 0; i < len(s); i++ {
		c := s[i]
		if st == inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(s) {
					i++
					out = append(out, s[i])
				}
			case '"':
				st = inCode
			}
			continue
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				out = append(out, '\n')
				if st == inLineComment {
					st = inCode
				}
			case 'r':
				out = append(out, '\r')
			default:
				out = append(out, s[i])
			}
			continue
		}
		out = append(out, c)
		st = next(st, prev(s, i), c)
	}
	return out
}

// next is the state after c, a byte that is neither a line break nor
// escaped; p is the byte before it. Only '/' and '*' matter in p, and they
// are the same bytes in a text and in its one-line form.
func next(st lexState, p, c byte) lexState {
	switch st {
	case inCode:
		switch {
		case c == '"':
			return inString
		case c == '/' && p == '/':
			return inLineComment
		case c == '*' && p == '/':
			return inBlockComment
		}
	case inBlockComment:
		if c == '/' && p == '*' {
			return inCode
		}
	}
	return st
}

// prev is the byte before data[i], or 0.
func prev(data []byte, i int) byte {
	if i == 0 {
		return 0
	}
	return data[i-1]
}
