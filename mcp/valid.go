package mcp

// Valid reports whether the line is one complete JSON value: the full parse
// that separates `[2026-07-23 16:48:43] INFO` from a batch. It answers as
// encoding/json.Valid does (FuzzValid holds it to that), in one pass without
// a scanner per call: json.Valid was an eighth of the recorder's work.
func Valid(line []byte) bool {
	var small [64]byte
	stack := small[:0] // '{' or '[' per open container
	i := skipSpace(line, 0)
	for {
		// A value.
		if i >= len(line) {
			return false
		}
		switch c := line[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxDepth {
				return false
			}
			stack = append(stack, c)
			i = skipSpace(line, i+1)
			if i < len(line) && line[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = memberName(line, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = str(line, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = number(line, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(line, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(line, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(line, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: a comma, or the end of containers, or of the line.
		for {
			i = skipSpace(line, i)
			if len(stack) == 0 {
				return i == len(line)
			}
			if i >= len(line) {
				return false
			}
			top := stack[len(stack)-1]
			if line[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if line[i] != ',' {
				return false
			}
			i = skipSpace(line, i+1)
			if top == '{' {
				if i = memberName(line, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

func skipSpace(b []byte, i int) int {
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
	if i = str(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// str reads the string starting at b[i] == '"' and returns the index after
// it, or -1. Bytes of 0x80 and above pass, as they do for encoding/json.
func str(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
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
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
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
