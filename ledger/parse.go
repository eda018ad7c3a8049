package ledger

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/mcpshim-dev/mcpshim/jsonscan"
)

const (
	kTS = iota
	kShim
	kRun
	kSeq
	kServer
	kPID
	kOrigin
	kPhase
	kEvent
	nCommon
)

// field is one top-level member: where its key and value lie in line.
type field struct {
	keyStart, keyEnd int    // the key's text, between its quotes
	unquoted         string // the key, when its text has escapes
	start, end       int
	kind             byte // one of `"0{[tfn`: string, number, object, array, true, false, null
	escaped          bool // a string value that needs unescaping
}

func (s *Scanner) key(f *field) string {
	if f.keyEnd < 0 {
		return f.unquoted
	}
	return string(s.line[f.keyStart:f.keyEnd])
}

// keys returns the event's field names, each once.
func (s *Scanner) keys() []string {
	keys := make([]string, 0, len(s.fields))
	for i := range s.fields {
		if k := s.key(&s.fields[i]); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// find returns the event field named key; the last one wins, as in Decode.
func (s *Scanner) find(key string) *field {
	for i := len(s.fields) - 1; i >= 0; i-- {
		f := &s.fields[i]
		if f.keyEnd < 0 && f.unquoted == key || f.keyEnd >= 0 && string(s.line[f.keyStart:f.keyEnd]) == key {
			return f
		}
	}
	return nil
}

func (s *Scanner) stringValue(f *field) string {
	b := s.line[f.start:f.end]
	if !f.escaped {
		return s.str(b[1 : len(b)-1])
	}
	return unquote(b)
}

// unquote decodes a JSON string the scan proved valid, as encoding/json does
// (invalid UTF-8 becomes U+FFFD).
func unquote(b []byte) string {
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

// parse reads line as a record. It validates the whole line as JSON, then
// applies Decode's rules to the common fields.
func (s *Scanner) parse(line []byte) bool {
	s.line = line
	s.fields = s.fields[:0]
	for i := range s.common {
		s.common[i].kind = 0
	}
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return false // no ts
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		kEnd, kEsc, ok := jsonscan.String(line, i)
		if !ok {
			return false
		}
		f := field{keyStart: i + 1, keyEnd: kEnd - 1}
		if kEsc {
			f.unquoted, f.keyEnd = unquote(line[i:kEnd]), -1
		}
		i = jsonscan.SkipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(line, i+1)
		end, esc, ok := value(line, i)
		if !ok {
			return false
		}
		f.start, f.end, f.kind, f.escaped = i, end, kindOf(line[i]), esc
		c := -1
		if f.keyEnd >= 0 {
			c = commonIndex(line[f.keyStart:f.keyEnd])
		} else {
			c = commonIndex([]byte(f.unquoted))
		}
		if c >= 0 {
			s.common[c] = f
		} else {
			s.fields = append(s.fields, f)
		}
		i = jsonscan.SkipSpace(line, end)
		if i >= len(line) {
			return false
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return false
		}
		i = jsonscan.SkipSpace(line, i+1)
	}
	if jsonscan.SkipSpace(line, i+1) != len(line) {
		return false
	}
	return s.fillCommon()
}

// fillCommon fills the common fields by Decode's rules: a record needs a valid
// ts and a run or an event; anything of the wrong type reads as zero.
func (s *Scanner) fillCommon() bool {
	ts := &s.common[kTS]
	if ts.kind != '"' {
		return false
	}
	var t time.Time
	var err error
	if ts.escaped {
		t, err = time.Parse(time.RFC3339Nano, unquote(s.line[ts.start:ts.end]))
	} else {
		t, err = s.clock.parse(s.line[ts.start+1 : ts.end-1])
	}
	if err != nil {
		return false
	}
	s.entry.Time = t
	s.entry.Run = s.commonStr(kRun)
	s.entry.Event = s.commonStr(kEvent)
	if s.entry.Run == "" && s.entry.Event == "" {
		return false
	}
	s.entry.Shim = s.commonStr(kShim)
	s.entry.Server = s.commonStr(kServer)
	s.entry.Origin = s.commonStr(kOrigin)
	s.entry.Phase = Phase(s.commonStr(kPhase))
	s.entry.Seq = uint64(s.commonInt(kSeq))
	s.entry.PID = int(s.commonInt(kPID))
	return true
}

// commonStr reads a common string field, reusing the previous line's string
// when the bytes are the same: consecutive records mostly share them.
func (s *Scanner) commonStr(k int) string {
	f := &s.common[k]
	if f.kind != '"' {
		return ""
	}
	if !f.escaped {
		b := s.line[f.start+1 : f.end-1]
		if prev := s.prev[k]; len(prev) == len(b) && prev == string(b) {
			return prev
		}
	}
	v := s.stringValue(f)
	s.prev[k] = v
	return v
}

// commonInt reads seq and pid as Decode does, out-of-range values included.
func (s *Scanner) commonInt(k int) int64 {
	f := &s.common[k]
	if f.kind != '0' {
		return 0
	}
	v, _ := strconv.ParseInt(string(s.line[f.start:f.end]), 10, 64)
	return v
}

func commonIndex(key []byte) int {
	switch string(key) {
	case "ts":
		return kTS
	case "shim":
		return kShim
	case "run":
		return kRun
	case "seq":
		return kSeq
	case "server":
		return kServer
	case "pid":
		return kPID
	case "origin":
		return kOrigin
	case "phase":
		return kPhase
	case "event":
		return kEvent
	}
	return -1
}

func kindOf(c byte) byte {
	if c == '-' || c >= '0' && c <= '9' {
		return '0'
	}
	return c
}

// value validates the field value at line[i] (inside the record's object),
// and for a string says whether it needs unescaping.
func value(line []byte, i int) (end int, escaped, ok bool) {
	if i < len(line) && line[i] == '"' {
		return jsonscan.String(line, i)
	}
	end, ok = jsonscan.Value(line, i, 1)
	return end, false, ok
}

// clock parses RFC 3339 times as time.Parse does, fast for the shim's own
// spelling (2026-11-28T00:31:38.256557Z): the time of the hour is kept from
// the previous record, which mostly shares it, and the rest is digits.
// Anything else goes to time.Parse.
type clock struct {
	hour [13]byte // "2026-11-28T00", as time.Parse accepted it
	at   time.Time
}

func (c *clock) parse(b []byte) (time.Time, error) {
	const secLen = len("2006-01-02T15:04:05")
	n := len(b)
	if n < secLen+1 || b[n-1] != 'Z' || b[13] != ':' || b[16] != ':' {
		return time.Parse(time.RFC3339Nano, string(b))
	}
	minute, ok1 := twoDigits(b[14:16])
	second, ok2 := twoDigits(b[17:19])
	if !ok1 || !ok2 || minute > 59 || second > 59 {
		return time.Parse(time.RFC3339Nano, string(b))
	}
	frac := b[secLen : n-1] // "" or ".256557"
	ns := 0
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Parse(time.RFC3339Nano, string(b))
		}
		for _, d := range frac[1:] {
			if d < '0' || d > '9' {
				return time.Parse(time.RFC3339Nano, string(b))
			}
			ns = ns*10 + int(d-'0')
		}
		for range 10 - len(frac) {
			ns *= 10
		}
	}
	if [13]byte(b[:13]) != c.hour || c.at.IsZero() {
		at, err := time.Parse(time.RFC3339, string(b[:13])+":00:00Z")
		if err != nil {
			return time.Parse(time.RFC3339Nano, string(b))
		}
		c.hour, c.at = [13]byte(b[:13]), at
	}
	return c.at.Add(time.Duration(minute)*time.Minute + time.Duration(second)*time.Second + time.Duration(ns)), nil
}

func twoDigits(b []byte) (int, bool) {
	if b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}
