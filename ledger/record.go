// Package ledger owns the phase ledger on disk: the record format (encode
// and decode), the writer that appends, rotates and prints records, the
// scanner that reads them back, and the ledger's file names and ids. It knows
// no event but its own records_lost, nor how events are interpreted: the
// vocabulary and the tracker are phases', the reports are report's.
package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/rs/zerolog"
)

// Phase is the boundary an event belongs to; phases names them.
type Phase string

// The ledger's own event: records that could not be written, counted.
const (
	PhaseLedger Phase = "ledger"
	RecordsLost       = "records_lost"
)

// Record is one ledger line. Time, Shim, Server and Seq are filled in by the
// Ledger when left zero.
type Record struct {
	Time   time.Time
	Shim   string // this mcpshim invocation
	Run    string // this child process; unique and time-sortable
	Seq    uint64 // per shim, from 1; a gap means records were lost
	Server string // the server's label
	PID    int
	Origin string // "" for the shim's own records, OriginServer, OriginProbe
	Phase  Phase
	Event  string
	Fields []Field
}

// Field is one event field. Value is a string, bool, int, int64, uint64,
// float64, []string, time.Duration (written as milliseconds) or []Field.
// Frames are never stored as raw JSON: Go would re-encode them.
type Field struct {
	Key   string
	Value any
}

// F is shorthand for a Field.
func F(key string, value any) Field { return Field{key, value} }

// Encode writes the record as one JSON line (with its newline) to buf.
func (r *Record) Encode(buf *bytes.Buffer) {
	var ts [len(time.RFC3339Nano)]byte
	r.encode(zerolog.New(buf), &stamp{}, ts[:0])
}

// encode writes the record with lg, formatting its time with st in scratch:
// the Ledger keeps all three, so that a record costs no allocation of its own.
func (r *Record) encode(lg zerolog.Logger, st *stamp, scratch []byte) {
	e := lg.Log().
		Bytes("ts", st.appendRFC3339Nano(scratch, r.Time)).
		Str("shim", r.Shim).
		Str("run", r.Run).
		Uint64("seq", r.Seq).
		Str("server", r.Server).
		Int("pid", r.PID)
	if r.Origin != "" {
		e = e.Str("origin", r.Origin)
	}
	e = e.Str("phase", string(r.Phase)).Str("event", r.Event)
	for _, f := range r.Fields {
		e = addField(e, f)
	}
	e.Send()
}

type fieldAdder[T any] interface {
	Str(string, string) T
	Bool(string, bool) T
	Int(string, int) T
	Int64(string, int64) T
	Uint64(string, uint64) T
	Float64(string, float64) T
	Strs(string, []string) T
	Dict(string, *zerolog.Event) T
}

func addField[T fieldAdder[T]](e T, f Field) T {
	switch v := f.Value.(type) {
	case string:
		return e.Str(f.Key, v)
	case bool:
		return e.Bool(f.Key, v)
	case int:
		return e.Int(f.Key, v)
	case int64:
		return e.Int64(f.Key, v)
	case uint64:
		return e.Uint64(f.Key, v)
	case float64:
		return e.Float64(f.Key, v)
	case time.Duration:
		return e.Float64(f.Key, float64(v.Microseconds())/1000)
	case []string:
		if v == nil {
			v = []string{}
		}
		return e.Strs(f.Key, v)
	case []Field:
		d := zerolog.Dict()
		for _, sub := range v {
			d = addField(d, sub)
		}
		return e.Dict(f.Key, d)
	default:
		return e.Str(f.Key, fmt.Sprint(v))
	}
}

// Entry is a record as read back from a ledger file: the common fields, and
// the event's own fields as decoded JSON values (numbers as json.Number).
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
	for _, k := range []string{"ts", "shim", "run", "seq", "server", "pid", "origin", "phase", "event"} {
		delete(m, k)
	}
	e.Fields = m
	return e, nil
}

// Str returns a string field, or "".
func (e *Entry) Str(key string) string {
	s, _ := e.Fields[key].(string)
	return s
}

// Int returns an integer field and whether it was present.
func (e *Entry) Int(key string) (int64, bool) {
	n, ok := e.Fields[key].(json.Number)
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
	n, ok := e.Fields[key].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// Bool returns a boolean field.
func (e *Entry) Bool(key string) bool {
	b, _ := e.Fields[key].(bool)
	return b
}

// Strs returns a list-of-strings field.
func (e *Entry) Strs(key string) []string {
	l, _ := e.Fields[key].([]any)
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
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
