package mcp

import "bytes"

// Scanner finds the top-level members of one JSON-RPC line as its bytes go
// by, in one pass, holding none of them: the line may arrive in chunks of
// any size, and the id may come after 64 MiB of result (the TypeScript SDK
// writes `{"result":…,"jsonrpc":"2.0","id":N}`). It keeps the short values it
// needs (id, method, jsonrpc and a few members of result) and the offsets of
// the others. A Scanner is reused line after line without allocating.
//
// It matches strings and brackets only; whether the line is valid JSON is
// Valid's business.
type Scanner struct {
	pos   int64 // bytes fed since Reset
	top   byte  // '{', '[', 'x' (not a message) or 0 (nothing yet)
	depth int
	done  bool  // the top-level value closed
	endAt int64 // the offset after its closing bracket

	inStr   bool
	esc     bool // the last string byte fed was a backslash
	keyStr  bool // the string being read is a member name
	scalar  bool // inside a number or literal
	lv      [3]level
	keyBuf  []byte
	keyOver bool
	keyEsc  bool // the member name has an escape

	vals [nMembers]span
	cap  [nMembers][]byte // captured values of the short members
}

// level is what the scanner knows about the object at depth 1 or 2.
type level struct {
	obj     bool
	wantKey bool
	key     member // the member whose value is being read
}

type span struct {
	start, end int64 // end is 0 until the value closed
	found      bool
}

// member is a member name the scanner cares about; depth-2 members are
// those of result.
type member uint8

const (
	mNone member = iota
	mJSONRPC
	mID
	mMethod
	mParams
	mResult
	mError
	mIsError    // result.isError
	mResultType // result.resultType
	mTask       // result.task: a CreateTaskResult
	nMembers
)

// maxCapture bounds a captured value (an id, a method name): longer ones are
// not a message the shim can answer.
const maxCapture = 64 << 10

func (m member) captured() bool {
	return m == mJSONRPC || m == mID || m == mMethod || m == mIsError || m == mResultType
}

// Reset readies the scanner for the next line, keeping its buffers.
func (s *Scanner) Reset() {
	s.pos, s.top, s.depth, s.done, s.endAt = 0, 0, 0, false, 0
	s.inStr, s.esc, s.keyStr, s.scalar, s.keyOver, s.keyEsc = false, false, false, false, false, false
	s.lv = [3]level{}
	s.vals = [nMembers]span{}
	s.keyBuf = s.keyBuf[:0]
	for i := range s.cap {
		s.cap[i] = s.cap[i][:0]
	}
}

// Write feeds the next bytes of the line. A newline is whitespace to it.
func (s *Scanner) Write(p []byte) {
	base := s.pos
	s.pos += int64(len(p))
	if s.top == 'x' || s.done {
		return
	}
	i := 0
	if s.opaque() {
		i = s.skipOpaque(p, 0, base) + 1
	}
	for ; i < len(p); i++ {
		if s.inStr {
			i = s.string(p, i, base)
			continue
		}
		c := p[i]
		if s.scalar {
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == '}' || c == ']' {
				s.scalar = false
				s.end(base + int64(i))
			} else {
				s.capture(p[i : i+1])
				continue
			}
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			s.inStr = true
			if s.depth <= 2 && s.depth > 0 && s.lv[s.depth].obj && s.lv[s.depth].wantKey {
				s.keyStr = true
				s.keyBuf, s.keyOver, s.keyEsc = s.keyBuf[:0], false, false
			} else {
				s.start(base + int64(i))
				s.capture(p[i : i+1])
			}
		case '{', '[':
			if s.depth == 0 {
				if s.top != 0 {
					s.top = 'x'
					return
				}
				s.top = c
			} else {
				s.start(base + int64(i))
			}
			s.depth++
			if s.depth <= 2 {
				s.lv[s.depth] = level{obj: c == '{', wantKey: c == '{'}
			}
			if s.opaque() {
				i = s.skipOpaque(p, i+1, base)
			}
		case '}', ']':
			if s.depth == 0 {
				s.top = 'x'
				return
			}
			s.depth--
			if s.depth == 0 {
				s.done, s.endAt = true, base+int64(i)+1
				return
			}
			s.end(base + int64(i) + 1)
		case ',':
			if s.depth <= 2 && s.lv[s.depth].obj {
				s.lv[s.depth].wantKey = true
				s.lv[s.depth].key = mNone
			}
		case ':':
		default:
			if s.depth == 0 {
				s.top = 'x'
				return
			}
			s.scalar = true
			s.start(base + int64(i))
			s.capture(p[i : i+1])
		}
	}
}

// opaque reports whether the scanner is inside a value whose members it
// does not read: anything below depth 2, and depth 2 outside result.
func (s *Scanner) opaque() bool {
	return s.depth > 2 || (s.depth == 2 && (s.lv[1].key != mResult || !s.lv[2].obj))
}

// skipOpaque matches brackets and skips strings from p[i:] until the
// scanner is back at a depth it reads, and returns the index of the last
// byte consumed. Most of a long result goes through here.
func (s *Scanner) skipOpaque(p []byte, i int, base int64) int {
	for j := i; j < len(p); j++ {
		if s.inStr {
			if s.esc {
				s.esc = false
				continue
			}
			// Short strings end within a few bytes: no IndexByte for them.
			short := false
			for n := 0; n < 16 && j < len(p); n, j = n+1, j+1 {
				if c := p[j]; c == '"' {
					s.inStr, short = false, true
					break
				} else if c == '\\' {
					if j+1 < len(p) {
						j++
					} else {
						s.esc = true
					}
					short = true
					break
				}
			}
			if short || j >= len(p) {
				continue
			}
			k := bytes.IndexByte(p[j:], '"')
			seg := p[j:]
			if k >= 0 {
				seg = p[j : j+k]
			}
			if b := bytes.IndexByte(seg, '\\'); b >= 0 {
				if j+b+1 < len(p) {
					j += b + 1 // the escaped byte
				} else {
					s.esc = true
					j = len(p) - 1
				}
				continue
			}
			if k < 0 {
				return len(p) - 1
			}
			j += k
			s.inStr = false
			continue
		}
		switch p[j] {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if !s.opaque() {
				s.end(base + int64(j) + 1)
				return j
			}
		}
	}
	return len(p) - 1
}

// string consumes string bytes from p[i:] and returns the index of the last
// byte consumed. It jumps from quote to backslash (IndexByte is vectorised):
// long tool results are mostly string contents.
func (s *Scanner) string(p []byte, i int, base int64) int {
	if s.esc {
		s.esc = false
		s.strBytes(p[i : i+1])
		return i
	}
	rest := p[i:]
	// Short strings (member names, methods, ids) end within a few bytes: a
	// plain loop beats two IndexByte calls there.
	for j := 0; j < len(rest) && j < 24; j++ {
		switch rest[j] {
		case '"':
			s.strBytes(rest[:j+1])
			s.inStr = false
			if s.keyStr {
				s.keyStr = false
				s.keyEnd()
			} else {
				s.end(base + int64(i+j) + 1)
			}
			return i + j
		case '\\':
			s.keyEsc = s.keyEsc || s.keyStr
			if j+1 < len(rest) {
				s.strBytes(rest[:j+2])
				return i + j + 1
			}
			s.strBytes(rest[:j+1])
			s.esc = true
			return len(p) - 1
		}
	}
	q := bytes.IndexByte(rest, '"')
	seg := rest
	if q >= 0 {
		seg = rest[:q]
	}
	if b := bytes.IndexByte(seg, '\\'); b >= 0 {
		s.keyEsc = s.keyEsc || s.keyStr
		// Take the text up to the escape and the escaped byte with it.
		if b+1 < len(rest) {
			s.strBytes(rest[:b+2])
			return i + b + 1
		}
		s.strBytes(rest[:b+1])
		s.esc = true
		return len(p) - 1
	}
	if q < 0 {
		s.strBytes(rest)
		return len(p) - 1
	}
	s.strBytes(rest[:q+1])
	s.inStr = false
	if s.keyStr {
		s.keyStr = false
		s.keyEnd()
	} else {
		s.end(base + int64(i+q) + 1)
	}
	return i + q
}

func (s *Scanner) strBytes(b []byte) {
	if s.keyStr {
		if len(s.keyBuf)+len(b) > 64 {
			s.keyOver = true
			return
		}
		s.keyBuf = append(s.keyBuf, b...)
		return
	}
	s.capture(b)
}

// keyEnd names the member whose value comes next.
func (s *Scanner) keyEnd() {
	l := &s.lv[s.depth]
	l.wantKey = false
	l.key = mNone
	if s.keyOver || len(s.keyBuf) == 0 {
		return
	}
	k := s.keyBuf[:len(s.keyBuf)-1] // without the closing quote
	if s.keyEsc {
		q := make([]byte, 0, len(k)+2) // a member name spelled with escapes: rare
		q = append(append(append(q, '"'), k...), '"')
		u, ok := unquoteBytes(q)
		if !ok {
			return
		}
		k = []byte(u)
	}
	if s.depth == 1 {
		switch string(k) {
		case "jsonrpc":
			l.key = mJSONRPC
		case "id":
			l.key = mID
		case "method":
			l.key = mMethod
		case "params":
			l.key = mParams
		case "result":
			l.key = mResult
		case "error":
			l.key = mError
		}
		return
	}
	if s.lv[1].key != mResult {
		return
	}
	switch string(k) {
	case "isError":
		l.key = mIsError
	case "resultType":
		l.key = mResultType
	case "task":
		l.key = mTask
	}
}

// current is the member the value being read belongs to, at depth 1 or 2.
func (s *Scanner) current() member {
	if s.depth == 1 || s.depth == 2 {
		if s.depth == 1 && !s.lv[1].obj {
			return mNone
		}
		if s.depth == 2 && !s.lv[2].obj {
			return mNone
		}
		return s.lv[s.depth].key
	}
	return mNone
}

func (s *Scanner) start(at int64) {
	if m := s.current(); m != mNone {
		s.vals[m] = span{start: at, found: true}
		s.cap[m] = s.cap[m][:0]
	}
}

func (s *Scanner) end(at int64) {
	if m := s.current(); m != mNone {
		s.vals[m].end = at
	}
}

func (s *Scanner) capture(b []byte) {
	m := s.current()
	if m == mNone || !m.captured() {
		return
	}
	if len(s.cap[m])+len(b) > maxCapture {
		s.cap[m] = append(s.cap[m][:0], 0) // not a value a message has: fails to parse
		return
	}
	s.cap[m] = append(s.cap[m], b...)
}

// value is a member's raw value: aliased from data (the line's first bytes)
// when it lies within, else the captured copy. nil when absent or unfinished.
func (s *Scanner) value(m member, data []byte) []byte {
	v := s.vals[m]
	if !v.found || v.end == 0 {
		return nil
	}
	if v.end <= int64(len(data)) {
		return data[v.start:v.end]
	}
	if m.captured() {
		return s.cap[m]
	}
	return nil
}

// Msg is the message the line turned out to be. data is what the caller kept
// of the line's first bytes (all of it, or a prefix); members that lie
// within it are sliced from it, the id, method and outcome come from the scan
// whatever was kept. Call it after the last Write of the line.
func (s *Scanner) Msg(data []byte) Msg {
	switch s.top {
	case '[':
		return peekBatch(trimSpace(data), s.done && s.endAt <= int64(len(data)))
	case '{':
	default:
		return Msg{}
	}
	m := Msg{Partial: !s.done}
	version := s.value(mJSONRPC, data)
	if !bytes.Equal(version, []byte(`"2.0"`)) && !(m.Partial && !s.vals[mJSONRPC].found) {
		return Msg{}
	}
	hasID := s.vals[mID].found
	if hasID {
		raw := s.value(mID, data)
		if raw == nil {
			if !m.Partial {
				return Msg{}
			}
			hasID = false // the line ended inside the id
		} else {
			id, ok := ParseID(raw)
			if !ok {
				return Msg{}
			}
			m.ID = id
			if s.vals[mID].end > int64(len(data)) {
				raw = append([]byte(nil), raw...) // the capture buffer is reused
			}
			m.RawID = raw
		}
	}
	if s.vals[mMethod].found {
		m.Method = methodName(s.value(mMethod, data))
	}
	m.Params = s.value(mParams, data)
	m.Result = s.value(mResult, data)
	m.Error = s.value(mError, data)
	hasResult, hasError := s.vals[mResult].found, s.vals[mError].found
	m.IsError = string(s.value(mIsError, data)) == "true"
	if rt := s.value(mResultType, data); rt != nil {
		m.ResultType = methodName(rt)
	}
	m.Task = s.vals[mTask].found
	for _, k := range []member{mParams, mResult, mError} {
		if v := s.vals[k]; v.found && (v.end == 0 || v.end > int64(len(data))) && v.start < int64(len(data)) {
			m.Cut, m.CutValue = memberNames[k], data[v.start:]
		}
	}
	switch {
	case m.Method != "" && hasID:
		m.Kind = Request
	case m.Method != "":
		m.Kind = Notification
	case hasError && hasID:
		m.Kind = ErrorResponse
	case hasResult && hasID:
		m.Kind = Response
	case m.Partial && hasID:
		// Cut before result or error: a large response whose id came first.
		m.Kind = Response
	default:
		return Msg{Partial: m.Partial}
	}
	return m
}

var memberNames = [nMembers]string{mParams: "params", mResult: "result", mError: "error"}
