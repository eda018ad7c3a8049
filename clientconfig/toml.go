package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// parseTOML reads a Codex config.toml into the same tree the JSON parser
// builds. github.com/BurntSushi/toml decodes and validates the whole file (its
// errors carry the line); it keeps no byte offsets, so a small scanner finds
// the span of each key = value line in the [mcp_servers.NAME] tables, which
// is all a rewrite splices. A value the scanner did not find (an entry made
// with dotted keys or an inline table) has start -1 and is read, never
// rewritten.
func parseTOML(file string, data []byte) (*value, error) {
	if off := tooDeep(data); off >= 0 {
		line, col := position(data, off)
		return nil, &SyntaxError{File: file, Line: line, Col: col, Msg: deepMsg}
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, &SyntaxError{File: file, Line: perr.Position.Line, Col: max(perr.Position.Col, 1), Msg: perr.Message}
		}
		return nil, &SyntaxError{File: file, Line: 1, Col: 1, Msg: err.Error()}
	}
	spans := scanTOMLTables(data, "mcp_servers")
	root := fromTOML(doc)
	root.start, root.end = 0, len(data)
	servers := root.get("mcp_servers")
	if servers == nil || servers.kind != kindObject {
		return root, nil
	}
	for i := range servers.members {
		m := &servers.members[i]
		t, ok := spans[m.key]
		if !ok || m.val.kind != kindObject {
			continue
		}
		m.keyStart = t.header
		m.val.start, m.val.end = t.header, t.end
		// Spanned members first, in file order, as the JSON tree has them.
		var placed []member
		for _, kv := range t.keys {
			i := m.val.index(kv.key)
			if i < 0 {
				continue
			}
			v := m.val.members[i].val
			if !attachSpans(data, v, kv.start, kv.end) {
				continue
			}
			placed = append(placed, member{key: kv.key, keyStart: kv.keyStart, val: v})
			m.val.members = append(m.val.members[:i], m.val.members[i+1:]...)
		}
		m.val.members = append(placed, m.val.members...)
	}
	return root, nil
}

// fromTOML converts a decoded TOML value; keys are sorted, since a map keeps
// no order. Every span is -1 until attachSpans sets it.
func fromTOML(v any) *value {
	switch v := v.(type) {
	case map[string]any:
		out := &value{kind: kindObject, start: -1, end: -1}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out.members = append(out.members, member{key: k, keyStart: -1, val: fromTOML(v[k])})
		}
		return out
	case []map[string]any:
		out := &value{kind: kindArray, start: -1, end: -1}
		for _, el := range v {
			out.elems = append(out.elems, fromTOML(el))
		}
		return out
	case []any:
		out := &value{kind: kindArray, start: -1, end: -1}
		for _, el := range v {
			out.elems = append(out.elems, fromTOML(el))
		}
		return out
	case string:
		return &value{kind: kindString, str: v, start: -1, end: -1}
	case bool:
		return &value{kind: kindLiteral, str: fmt.Sprint(v), start: -1, end: -1}
	}
	return &value{kind: kindNumber, str: fmt.Sprint(v), start: -1, end: -1}
}

// attachSpans gives v the span [start, end) and, for a one-line string or an
// array of them, the spans of its elements. It reports false for a value it
// cannot place exactly (a multi-line string), which then stays unspanned.
func attachSpans(data []byte, v *value, start, end int) bool {
	switch v.kind {
	case kindString:
		if bytes.HasPrefix(data[start:], []byte(`"""`)) || bytes.HasPrefix(data[start:], []byte(`'''`)) {
			return false
		}
	case kindArray:
		els := scanArray(data, start, end)
		if len(els) != len(v.elems) {
			return false
		}
		for i, el := range els {
			if !attachSpans(data, v.elems[i], el[0], el[1]) {
				return false
			}
		}
	}
	v.start, v.end = start, end
	return true
}

// tomlTable is one [PREFIX.NAME] table: where its header starts, where the
// table ends, and its key = value lines.
type tomlTable struct {
	header, end int
	keys        []tomlKey
}

type tomlKey struct {
	key        string
	keyStart   int
	start, end int // the value
}

// scanTOMLTables finds the [prefix.NAME] tables of a file that parses. It
// reads line by line, stepping over strings, arrays and inline tables that
// span lines, and records each bare or quoted key and its value's span.
func scanTOMLTables(data []byte, prefix string) map[string]*tomlTable {
	out := map[string]*tomlTable{}
	var cur *tomlTable
	pos := 0
	if bytes.HasPrefix(data, utf8BOM) {
		pos = len(utf8BOM) // Codex's parser (the toml crate's lexer) skips it too
	}
	for pos < len(data) {
		lineStart := pos
		pos = skipSpace(data, pos)
		switch {
		case pos >= len(data):
		case data[pos] == '\n' || data[pos] == '\r' || data[pos] == '#':
			pos = lineEnd(data, pos)
		case data[pos] == '[':
			if cur != nil {
				cur.end = lineStart
			}
			cur = nil
			end := lineEnd(data, pos)
			header := strings.TrimSpace(string(data[pos:end]))
			if i := strings.IndexByte(header, '#'); i >= 0 && !strings.ContainsAny(header[:i], `"'`) {
				header = strings.TrimSpace(header[:i])
			}
			if !strings.HasPrefix(header, "[[") {
				if name, ok := tableName(strings.TrimSuffix(strings.TrimPrefix(header, "["), "]"), prefix); ok {
					cur = &tomlTable{header: lineStart}
					out[name] = cur
				}
			}
			pos = end
		default:
			keyStart := pos
			key, next := readKey(data, pos)
			next = skipSpace(data, next)
			if next >= len(data) || data[next] != '=' {
				pos = lineEnd(data, pos)
				continue
			}
			vStart := skipSpace(data, next+1)
			vEnd := skipValue(data, vStart)
			if cur != nil && key != "" {
				cur.keys = append(cur.keys, tomlKey{key: key, keyStart: keyStart, start: vStart, end: vEnd})
			}
			pos = lineEnd(data, vEnd)
		}
		if pos < len(data) && data[pos] == '\n' {
			pos++
		}
	}
	if cur != nil {
		cur.end = len(data)
	}
	return out
}

// tableName reads NAME from a header "prefix.NAME" (NAME bare or quoted).
func tableName(header, prefix string) (string, bool) {
	header = strings.TrimSpace(header)
	rest, ok := strings.CutPrefix(header, prefix)
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, ".") {
		return "", false
	}
	rest = strings.TrimSpace(rest[1:])
	name, next := readKey([]byte(rest), 0)
	if name == "" || strings.TrimSpace(rest[next:]) != "" {
		return "", false // [mcp_servers.NAME.env] and the like
	}
	return name, true
}

// readKey reads one key piece at pos: bare, "basic" or 'literal'. A dotted
// key (a.b = ...) gives "", since it is not a member of this table.
func readKey(data []byte, pos int) (string, int) {
	start := pos
	var key string
	switch {
	case pos < len(data) && (data[pos] == '"' || data[pos] == '\''):
		end := skipString(data, pos)
		raw := string(data[pos:end])
		if data[pos] == '\'' {
			key = strings.Trim(raw, "'")
		} else if err := toml.Unmarshal([]byte("k = "+raw), &struct {
			K *string `toml:"k"`
		}{K: &key}); err != nil {
			key = ""
		}
		pos = end
	default:
		for pos < len(data) && (isBare(data[pos])) {
			pos++
		}
		key = string(data[start:pos])
	}
	if p := skipSpace(data, pos); p < len(data) && data[p] == '.' {
		return "", p
	}
	return key, pos
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && (data[pos] == ' ' || data[pos] == '\t') {
		pos++
	}
	return pos
}

// lineEnd is the offset of the newline ending pos's line (or len(data)).
func lineEnd(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(data)
}

// skipValue returns the end of the value starting at pos.
func skipValue(data []byte, pos int) int {
	if pos >= len(data) {
		return pos
	}
	switch data[pos] {
	case '"', '\'':
		return skipString(data, pos)
	case '[', '{':
		return skipNested(data, pos)
	}
	end := pos
	for end < len(data) && !strings.ContainsRune(" \t\r\n#,]}", rune(data[end])) {
		end++
	}
	return end
}

// skipString returns the end of the string starting at pos, multi-line ones
// included.
func skipString(data []byte, pos int) int {
	q := data[pos]
	if bytes.HasPrefix(data[pos:], []byte{q, q, q}) {
		for i := pos + 3; i < len(data); i++ {
			if q == '"' && data[i] == '\\' {
				i++
				continue
			}
			if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
				end := i + 3
				for end < len(data) && data[end] == q { // up to two quotes may end the content
					end++
				}
				return end
			}
		}
		return len(data)
	}
	for i := pos + 1; i < len(data); i++ {
		switch {
		case q == '"' && data[i] == '\\':
			i++
		case data[i] == q:
			return i + 1
		case data[i] == '\n':
			return i
		}
	}
	return len(data)
}

// tooDeep is the offset at which the arrays and inline tables of a TOML
// document nest deeper than maxDepth, or -1: the decoder recurses, and a file
// nested millions deep overflowed the stack.
func tooDeep(data []byte) int {
	return brackets(data, 0, func(depth int) bool { return depth > maxDepth })
}

// skipNested returns the end of the array or inline table at pos, stepping
// over strings and comments inside it.
func skipNested(data []byte, pos int) int {
	if i := brackets(data, pos, func(depth int) bool { return depth == 0 }); i >= 0 {
		return i + 1
	}
	return len(data)
}

// brackets walks data from pos, stepping over strings and comments, and asks
// stop at each bracket with the depth it leaves: the offset of the first
// bracket stop is true for, or -1.
func brackets(data []byte, pos int, stop func(depth int) bool) int {
	depth := 0
	for i := pos; i < len(data); i++ {
		switch data[i] {
		case '"', '\'':
			i = skipString(data, i) - 1
			continue
		case '#':
			i = lineEnd(data, i) - 1
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		default:
			continue
		}
		if stop(depth) {
			return i
		}
	}
	return -1
}

// scanArray returns the spans of the top-level elements of the array
// occupying [start, end).
func scanArray(data []byte, start, end int) [][2]int {
	var out [][2]int
	i := start + 1
	for i < end-1 {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',':
			i++
		case c == '#':
			i = lineEnd(data, i)
		default:
			e := skipValue(data, i)
			if e <= i {
				return out
			}
			out = append(out, [2]int{i, e})
			i = e
		}
	}
	return out
}
