package clientconfig

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

var utf8BOM = []byte("\xEF\xBB\xBF")

// kind is the JSON type of a value.
type kind byte

const (
	kindObject kind = iota
	kindArray
	kindString
	kindNumber
	kindLiteral // true, false, null
)

// value is one JSON value and the byte span [start, end) it occupies in the
// document, so a rewrite can splice bytes instead of re-marshalling.
type value struct {
	kind       kind
	start, end int
	str        string   // decoded text of a string; a literal's or number's text
	members    []member // object members in document order
	elems      []*value // array elements
}

type member struct {
	key      string
	keyStart int // offset of the key's opening quote
	val      *value
}

// get returns the value of key, the last one when a key repeats (as JSON.parse does).
func (v *value) get(key string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return v.members[i].val
		}
	}
	return nil
}

// index returns the position of key's last occurrence among v's members, or -1.
func (v *value) index(key string) int {
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return i
		}
	}
	return -1
}

// SyntaxError is a file that does not parse, with the place it stops making sense.
type SyntaxError struct {
	File      string
	Line, Col int // 1-based; Col counts characters, not bytes
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// parser reads one JSON document. With jsonc it also accepts the comments and
// trailing commas VS Code allows; without, a comment is an error naming it.
type parser struct {
	data   []byte
	pos    int
	depth  int  // objects and arrays open at pos
	jsonc  bool // comments allowed
	commas bool // trailing commas allowed
	file   string
	client string // whose parser refuses comments, for the message
}

func parse(file string, data []byte, jsonc bool, client string) (*value, error) {
	return parseWith(file, data, jsonc, jsonc, client)
}

// parseWith allows comments and trailing commas separately: Gemini CLI strips
// comments and then calls JSON.parse, which refuses a trailing comma.
func parseWith(file string, data []byte, comments, commas bool, client string) (*value, error) {
	p := &parser{data: data, jsonc: comments, commas: commas, file: file, client: client}
	if bytes.HasPrefix(data, utf8BOM) {
		p.pos = len(utf8BOM) // editors write it, JSON ignores it
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.data) {
		return nil, p.errorf(p.pos, "unexpected %s after the top-level value", p.describe())
	}
	return v, nil
}

// errorf builds a SyntaxError at byte offset off.
func (p *parser) errorf(off int, format string, args ...any) error {
	line, col := position(p.data, off)
	return &SyntaxError{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// position turns a byte offset into a 1-based line and character column.
func position(data []byte, off int) (line, col int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(data[start:min(off, len(data))]) + 1
}

func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	return strconv.QuoteRune(r)
}

// space skips whitespace and, in jsonc mode, comments.
func (p *parser) space() error {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '/':
			if p.pos+1 >= len(p.data) || (p.data[p.pos+1] != '/' && p.data[p.pos+1] != '*') {
				return p.errorf(p.pos, "unexpected %s", p.describe())
			}
			if !p.jsonc {
				return p.errorf(p.pos, "comment: %s reads this file as strict JSON, which has no comments; remove it", p.client)
			}
			if err := p.comment(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) comment() error {
	start := p.pos
	if p.data[p.pos+1] == '/' {
		for p.pos < len(p.data) && p.data[p.pos] != '\n' {
			p.pos++
		}
		return nil
	}
	for p.pos += 2; p.pos+1 < len(p.data); p.pos++ {
		if p.data[p.pos] == '*' && p.data[p.pos+1] == '/' {
			p.pos += 2
			return nil
		}
	}
	return p.errorf(start, "unterminated comment")
}

func (p *parser) value() (*value, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf(p.pos, "unexpected end of file, want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.pos
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &value{kind: kindString, start: start, end: p.pos, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit {
				v := &value{kind: kindLiteral, start: p.pos, end: p.pos + len(lit), str: lit}
				p.pos += len(lit)
				return v, nil
			}
		}
		return nil, p.errorf(p.pos, "unexpected %s, want a value", p.describe())
	}
}

// maxDepth bounds how deep a config's values nest: the parsers recurse, and
// a file nested millions deep overflowed the stack. No client's config comes
// near it.
const maxDepth = 1000

const deepMsg = "values nested more than 1000 deep: no client config is; the file is refused"

// enter counts one more open object or array, refusing one too many.
func (p *parser) enter() error {
	if p.depth++; p.depth > maxDepth {
		return p.errorf(p.pos, deepMsg)
	}
	return nil
}

func (p *parser) object() (*value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	v := &value{kind: kindObject, start: p.pos}
	p.pos++ // {
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' && (len(v.members) == 0 || p.commas) {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf(p.pos, "unexpected %s, want a quoted key", p.describe())
		}
		keyStart := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf(p.pos, "unexpected %s after key %q, want ':'", p.describe(), key)
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, member{key: key, keyStart: keyStart, val: val})
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		return nil, p.errorf(p.pos, "unexpected %s in object, want ',' or '}'", p.describe())
	}
}

func (p *parser) array() (*value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	v := &value{kind: kindArray, start: p.pos}
	p.pos++ // [
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' && (len(v.elems) == 0 || p.commas) {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		el, err := p.value()
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, el)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		return nil, p.errorf(p.pos, "unexpected %s in array, want ',' or ']'", p.describe())
	}
}

// string decodes the string starting at the opening quote at p.pos.
func (p *parser) string() (string, error) {
	start := p.pos
	p.pos++
	var out []byte
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c < 0x20:
			return "", p.errorf(p.pos, "control character %q in string", c)
		case c != '\\':
			out = append(out, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		esc := p.data[p.pos+1]
		if i := strings.IndexByte(`"\/bfnrt`, esc); i >= 0 {
			out = append(out, "\"\\/\b\f\n\r\t"[i])
			p.pos += 2
			continue
		}
		if esc != 'u' {
			return "", p.errorf(p.pos, "invalid escape \\%c in string", esc)
		}
		r, err := p.hex4(p.pos + 2)
		if err != nil {
			return "", err
		}
		p.pos += 6
		if utf16.IsSurrogate(r) && p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
			if r2, err := p.hex4(p.pos + 2); err == nil {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					p.pos += 6
				}
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return "", p.errorf(start, "unterminated string")
}

func (p *parser) hex4(off int) (rune, error) {
	if off+4 > len(p.data) {
		return 0, p.errorf(off, "short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[off:off+4]), 16, 16)
	if err != nil {
		return 0, p.errorf(off, "invalid \\u escape %q", p.data[off:off+4])
	}
	return rune(n), nil
}

// number accepts the JSON number grammar: -?int frac? exp?.
func (p *parser) number() (*value, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 || (n > 1 && p.data[intStart] == '0') {
		return nil, p.errorf(start, "invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf(start, "invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf(start, "invalid number")
		}
	}
	return &value{kind: kindNumber, start: start, end: p.pos}, nil
}
