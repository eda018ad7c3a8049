// Package witness gives the shim evidence of what a server did beyond the MCP
// session: phase events the server reports on its stderr, and a loopback proxy
// that records each outbound connection the server makes through it, and
// the ledger records of both.
package witness

import (
	"bytes"
	"encoding/json"
	"github.com/mcpshim-dev/mcpshim/redact"
	"io"
	"strconv"
	"strings"
)

// ServerEvent is a phase event a server reported on its stderr.
type ServerEvent struct {
	Phase  string
	Event  string
	Fields [][2]string // every other key, in line order, values redacted
}

// maxEventLine bounds what a server can fold into the ledger with one line.
const maxEventLine = 16 << 10

// ParseServerEvent recognises one stderr line (trailing newline optional) as a
// phase event. Two shapes are accepted:
//
//   - a JSON object whose "phase" and "event" values are non-empty strings;
//     other values keep their JSON text (strings unquoted, objects compacted);
//   - a logfmt line made only of key=value pairs separated by spaces, values
//     bare or double-quoted with Go/JSON escapes, e.g.
//     `phase=execution event=external_attempt action_id=act_8Qf host=api.example.test`.
//
// phase and event must each appear exactly once. Values pass through Redact,
// and a value whose key names a secret (api_key, token, password, ...) is
// replaced whole. ok is false for anything else, including lines longer than
// 16 KiB.
func ParseServerEvent(line []byte) (ev ServerEvent, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || len(line) > maxEventLine {
		return ServerEvent{}, false
	}
	var pairs [][2]string
	if line[0] == '{' {
		pairs, ok = jsonPairs(line)
	} else {
		pairs, ok = logfmtPairs(string(line))
	}
	if !ok {
		return ServerEvent{}, false
	}
	var nPhase, nEvent int
	for _, p := range pairs {
		switch p[0] {
		case "phase":
			nPhase++
			ev.Phase = redact.String(p[1])
		case "event":
			nEvent++
			ev.Event = redact.String(p[1])
		default:
			ev.Fields = append(ev.Fields, [2]string{p[0], redact.Field(p[0], p[1])})
		}
	}
	if nPhase != 1 || nEvent != 1 || ev.Phase == "" || ev.Event == "" {
		return ServerEvent{}, false
	}
	return ev, true
}

// jsonPairs reads a single JSON object keeping its key order, which a map
// would lose. phase and event must be strings.
func jsonPairs(line []byte) ([][2]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var pairs [][2]string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		val, isString := jsonText(raw)
		if (key == "phase" || key == "event") && !isString {
			return nil, false
		}
		pairs = append(pairs, [2]string{key, val})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing text after the object
	}
	return pairs, true
}

// jsonText renders a JSON value as ledger text and reports whether it was a string.
func jsonText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw), false
	}
	return buf.String(), false
}

// logfmtPairs splits a line of key=value pairs; any other token rejects the line.
func logfmtPairs(s string) ([][2]string, bool) {
	var pairs [][2]string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return pairs, len(pairs) > 0
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || !logfmtKey(s[:eq]) {
			return nil, false
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			end := closingQuote(s)
			if end < 0 {
				return nil, false
			}
			v, err := strconv.Unquote(s[:end+1])
			if err != nil {
				return nil, false
			}
			val, s = v, s[end+1:]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return nil, false
			}
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		pairs = append(pairs, [2]string{key, val})
	}
}

// logfmtKey reports whether s is a key of a logfmt pair: letters, digits,
// '_', '.' and '-' (the regexp ^[A-Za-z0-9_.-]+$, without compiling one at
// every shim's start).
func logfmtKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// closingQuote returns the index of the quote ending the string s opens, or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
