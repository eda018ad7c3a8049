package mcp

import (
	"bytes"
)

// Kind is what a line turned out to be.
type Kind uint8

const (
	// Noise is a line that is not a JSON-RPC message.
	Noise Kind = iota
	// Request has a method and an id.
	Request
	// Notification has a method and no id.
	Notification
	// Response has an id and a result.
	Response
	// ErrorResponse has an id (possibly null) and an error.
	ErrorResponse
	// Batch is a JSON array of messages; see Msg.Batch.
	Batch
)

var kindNames = [...]string{"noise", "request", "notification", "response", "error", "batch"}

func (k Kind) String() string { return kindNames[k] }

// Msg is what the scanner learned about one message. Its byte slices alias
// the line (RawID may be a copy when the id lay beyond what was kept).
type Msg struct {
	Kind   Kind
	ID     ID     // compared as a value: see ID
	RawID  []byte // the id as the peer spelled it, to answer with
	Method string
	Params []byte // raw members, nil when absent or not kept
	Result []byte
	Error  []byte
	Batch  []Msg // the elements of a Batch
	// Partial is set when the line ended (or was cut at the observation limit)
	// before the object closed: the members found so far are reported.
	Partial bool
	// Cut names the member whose value the kept bytes end in, and CutValue is
	// what there is of that value: a long answer's result starts there.
	Cut      string
	CutValue []byte
	// Members of result read by the scanner wherever they are in the line.
	IsError    bool   // result.isError is true
	ResultType string // result.resultType ("input_required" in 2026-07-28)
	Task       bool   // result.task is present: a CreateTaskResult
}

// IsResponse reports whether m answers a request.
func (m *Msg) IsResponse() bool { return m.Kind == Response || m.Kind == ErrorResponse }

// Peek classifies one whole line (without its newline) with the scanner.
func Peek(line []byte) Msg {
	var sc Scanner
	sc.Write(line)
	return sc.Msg(line)
}

// peekBatch classifies the elements of a batch (a JSON array) that lie in
// line; whole says line is the entire batch.
func peekBatch(line []byte, whole bool) Msg {
	m := Msg{Kind: Batch, Partial: !whole}
	i := skipWS(line, 1)
	if i < len(line) && line[i] == ']' {
		return Msg{} // an empty batch is not a message
	}
	for i < len(line) {
		end, ok := skipValue(line, i)
		if !ok {
			m.Partial = true
			if i < len(line) && line[i] == '{' {
				e := Peek(line[i:])
				e.Partial = true
				m.Batch = append(m.Batch, e)
			}
			return m
		}
		e := Peek(line[i:end])
		if e.Kind == Noise || e.Kind == Batch {
			return Msg{}
		}
		m.Batch = append(m.Batch, e)
		i = skipWS(line, end)
		if i >= len(line) {
			m.Partial = true
			return m
		}
		if line[i] == ']' {
			return m
		}
		if line[i] != ',' {
			return Msg{}
		}
		i = skipWS(line, i+1)
	}
	m.Partial = true
	return m
}

// methodName decodes a method (or other short string) value, without
// allocating for the methods of the protocol.
func methodName(v []byte) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if name, ok := knownMethods[string(v[1:len(v)-1])]; ok {
			return name
		}
	}
	return unquote(v)
}

var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{MethodInitialize, NotificationInitialized, MethodDiscover, MethodPing,
		MethodListTools, MethodCallTool, NotificationToolListChanged, MethodListResources, MethodReadResource,
		MethodSubscribe, MethodUnsubscribe, MethodListResourceTemplates, MethodListPrompts, MethodGetPrompt,
		MethodSetLevel, MethodComplete, NotificationCancelled, NotificationProgress,
		NotificationLoggingMessage, NotificationResourceUpdated, NotificationResourceListChanged,
		NotificationPromptListChanged, NotificationRootsListChanged, MethodListen,
		MethodGetTask, MethodTaskResult, MethodListTasks, MethodCancelTask, NotificationTaskStatus,
		MethodElicit, MethodCreateMessage, MethodListRoots, "input_required", "complete"} {
		m[s] = s
	}
	return m
}()

func unquote(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	s, _ := unquoteBytes(v)
	return s
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b[skipWS(b, 0):]
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
// It jumps from quote to quote (IndexByte is vectorised): long tool results
// are mostly string contents.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// skipValue returns the index after the value starting at b[i]. It matches
// brackets and strings only; the contents are checked by Valid when needed.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipString(b, j)
				if !ok {
					return len(b), false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	j := i
	for j < len(b) && !isWS(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i && j < len(b)
}

// Member returns the raw value of key in the JSON object obj, scanning only its
// top level. It is how the tracker reads params.name without decoding arguments.
//
// Not inlined: at its many call sites that grew the binary by ~20 KB.
//
//go:noinline
func Member(obj []byte, key string) (v []byte) {
	members(obj, func(k, val []byte) bool {
		if string(k) == key {
			v = val
			return false
		}
		return true
	})
	return v
}

// membersOf is Member for several keys in one pass over obj: vals[i] is the
// value of keys[i], nil when absent. A tools/call's params are read once,
// not once per member the tracker wants.
func membersOf(obj []byte, keys []string, vals [][]byte) {
	clear(vals)
	found := 0
	members(obj, func(k, v []byte) bool {
		for n, key := range keys {
			if vals[n] == nil && string(k) == key { // the first of a repeated key, as Member
				vals[n] = v
				found++
			}
		}
		return found < len(keys)
	})
}

// members calls f with each top-level member of the object obj, name and
// raw value, until f returns false or obj ends or stops being an object.
func members(obj []byte, f func(k, v []byte) bool) {
	obj = trimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return
	}
	i := skipWS(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend, ok := skipString(obj, i)
		if !ok {
			return
		}
		k := obj[i+1 : kend-1]
		i = skipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipWS(obj, i+1)
		vend, ok := skipValue(obj, i)
		if !ok || !f(k, obj[i:vend]) {
			return
		}
		i = skipWS(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
}

// FirstKey returns the first member name of the (possibly cut) object v, or "".
func FirstKey(v []byte) string {
	v = trimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return ""
	}
	i := skipWS(v, 1)
	if i >= len(v) || v[i] != '"' {
		return ""
	}
	end, ok := skipString(v, i)
	if !ok {
		return ""
	}
	return unquote(v[i:end])
}

// String returns the JSON string value v decoded, or "" when v is not a string.
func String(v []byte) string { return unquote(v) }
