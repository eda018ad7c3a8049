package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Entry is a record as read back from a ledger: the common fields, and the
// event's own fields through the accessors (Str, Int, Float, Bool, False,
// Strs, Has, FieldKeys).
//
// An Entry from Decode, or built by hand, holds the event's fields in Fields
// as decoded JSON values (numbers as json.Number). The Scanner's Entry leaves
// Fields nil and its accessors read the Scanner's current line on demand: it
// is valid until the next Scan, and Scanner.Decode keeps a copy. EntryOf's
// reads a Record's fields as they will be written, with no copy. All answer
// every accessor the same for the same record.
type Entry struct {
	Time   time.Time
	Shim   string
	Run    string
	Seq    uint64
	Server string
	PID    int
	Origin string
	Phase  Phase
	Event  string
	Fields map[string]any

	sc  *Scanner // set on the Scanner's own Entry
	rec *Record  // set by EntryOf
}

// EntryOf reads r as it will be read back from the ledger, without copying
// or encoding it: for whoever folds records as they are written (the shim's
// own verdict line). It is valid while r is unchanged.
func EntryOf(r *Record) Entry {
	e := Entry{Time: r.Time, Shim: r.Shim, Run: r.Run, Seq: r.Seq, Server: r.Server, PID: r.PID,
		Origin: r.Origin, Phase: r.Phase, Event: r.Event, rec: r}
	// A field named like a common one replaces it, as in the line.
	for i := len(r.Fields) - 1; i >= 0; i-- {
		if r.Fields[i].Key == "pid" {
			if v, ok := recordNumber(r.Fields[i].Value); ok {
				e.PID = int(v)
			}
			break
		}
	}
	return e
}

// commonKeys are a line's own keys, which are not event fields.
var commonKeys = []string{"ts", "shim", "run", "seq", "server", "pid", "origin", "phase", "event"}

// field is the value of the last field named key (the one a reader of the
// line keeps), or nil.
func (r *Record) field(key string) any {
	if slices.Contains(commonKeys, key) {
		return nil
	}
	for i := len(r.Fields) - 1; i >= 0; i-- {
		if r.Fields[i].Key == key {
			if r.Fields[i].Value == nil {
				return ""
			}
			return r.Fields[i].Value
		}
	}
	return nil
}

// recordNumber is a Record's numeric value as the line carries it (a
// duration in milliseconds), and whether v is a number.
func recordNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case time.Duration:
		return float64(n.Microseconds()) / 1000, true
	}
	return 0, false
}

// ErrNotRecord is returned by Decode for a line that is not a ledger record.
var ErrNotRecord = fmt.Errorf("not a ledger record")

// Decode parses one ledger line. Unknown fields from newer versions are kept
// in Fields; a line without ts, run or event is ErrNotRecord.
func Decode(line []byte) (Entry, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return Entry{}, fmt.Errorf("%w: %w", ErrNotRecord, err)
	}
	var e Entry
	ts, _ := m["ts"].(string)
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return Entry{}, fmt.Errorf("%w: bad ts %q", ErrNotRecord, ts)
	}
	e.Time = t
	e.Run, _ = m["run"].(string)
	e.Event, _ = m["event"].(string)
	if e.Run == "" && e.Event == "" {
		return Entry{}, fmt.Errorf("%w: no run or event", ErrNotRecord)
	}
	e.Shim, _ = m["shim"].(string)
	e.Server, _ = m["server"].(string)
	e.Origin, _ = m["origin"].(string)
	p, _ := m["phase"].(string)
	e.Phase = Phase(p)
	if n, ok := m["seq"].(json.Number); ok {
		v, _ := n.Int64()
		e.Seq = uint64(v)
	}
	if n, ok := m["pid"].(json.Number); ok {
		v, _ := n.Int64()
		e.PID = int(v)
	}
	for _, k := range commonKeys {
		delete(m, k)
	}
	e.Fields = m
	return e, nil
}

// Each accessor reads either Decode's map (json.Number and []any values) or
// the Scanner's line, the hot path that folds whole ledgers; the tests hold
// the two to the same answers.

// Has reports whether the event has the field.
func (e *Entry) Has(key string) bool {
	if e.rec != nil {
		return e.rec.field(key) != nil
	}
	if e.sc == nil {
		_, ok := e.Fields[key]
		return ok
	}
	return e.sc.find(key) != nil
}

// Str returns a string field, or "".
func (e *Entry) Str(key string) string {
	if e.rec != nil {
		s, _ := e.rec.field(key).(string)
		return s
	}
	if e.sc == nil {
		s, _ := e.Fields[key].(string)
		return s
	}
	f := e.sc.find(key)
	if f == nil || f.kind != '"' {
		return ""
	}
	return e.sc.stringValue(f)
}

// Int returns an integer field and whether it was present; a number with a
// fraction or an exponent is truncated.
func (e *Entry) Int(key string) (int64, bool) {
	if e.rec != nil {
		switch v := e.rec.field(key).(type) {
		case int:
			return int64(v), true
		case int64:
			return v, true
		case uint64:
			return int64(v), true
		}
		f, ok := recordNumber(e.rec.field(key))
		return int64(f), ok
	}
	if e.sc == nil {
		return numberInt(e.Fields[key])
	}
	f := e.sc.find(key)
	if f == nil || f.kind != '0' {
		return 0, false
	}
	n := string(e.sc.line[f.start:f.end])
	if v, err := strconv.ParseInt(n, 10, 64); err == nil {
		return v, true
	}
	v, err := strconv.ParseFloat(n, 64)
	return int64(v), err == nil
}

func numberInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if v, err := n.Int64(); err == nil {
		return v, true
	}
	f, err := n.Float64()
	return int64(f), err == nil
}

// Float returns a number field and whether it was present.
func (e *Entry) Float(key string) (float64, bool) {
	if e.rec != nil {
		return recordNumber(e.rec.field(key))
	}
	if e.sc == nil {
		n, ok := e.Fields[key].(json.Number)
		if !ok {
			return 0, false
		}
		f, err := n.Float64()
		return f, err == nil
	}
	f := e.sc.find(key)
	if f == nil || f.kind != '0' {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(e.sc.line[f.start:f.end]), 64)
	return v, err == nil
}

// Bool returns a boolean field.
func (e *Entry) Bool(key string) bool {
	if e.rec != nil {
		b, _ := e.rec.field(key).(bool)
		return b
	}
	if e.sc == nil {
		b, _ := e.Fields[key].(bool)
		return b
	}
	f := e.sc.find(key)
	return f != nil && f.kind == 't'
}

// False reports whether key is present with the value false.
func (e *Entry) False(key string) bool {
	if e.rec != nil {
		b, ok := e.rec.field(key).(bool)
		return ok && !b
	}
	if e.sc == nil {
		b, ok := e.Fields[key].(bool)
		return ok && !b
	}
	f := e.sc.find(key)
	return f != nil && f.kind == 'f'
}

// Strs returns a list-of-strings field; its other elements are left out.
func (e *Entry) Strs(key string) []string {
	if e.rec != nil {
		if l, ok := e.rec.field(key).([]string); ok {
			return l
		}
		return []string{}
	}
	if e.sc == nil {
		l, _ := e.Fields[key].([]any)
		return strsOf(l)
	}
	f := e.sc.find(key)
	if f == nil || f.kind != '[' {
		return []string{}
	}
	var l []any
	if err := json.Unmarshal(e.sc.line[f.start:f.end], &l); err != nil {
		return []string{}
	}
	return strsOf(l)
}

func strsOf(l []any) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// FieldKeys returns the event's own field names, sorted.
func (e *Entry) FieldKeys() []string {
	var keys []string
	if e.rec != nil {
		for _, f := range e.rec.Fields {
			if !slices.Contains(keys, f.Key) && !slices.Contains(commonKeys, f.Key) {
				keys = append(keys, f.Key)
			}
		}
	} else if e.sc == nil {
		keys = make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
	} else {
		keys = e.sc.keys()
	}
	sort.Strings(keys)
	return keys
}
