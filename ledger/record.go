// Package ledger owns the phase ledger on disk: the record format (Record
// to encode, Entry to read back), the writer that appends, rotates and prints
// records, the scanner that reads them back, which old files prune removes,
// and the ledger's file names and ids. It knows no event but its own
// records_lost, nor how events are interpreted: the vocabulary and the
// tracker are phases', the reports are report's.
package ledger

import (
	"bytes"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

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

// fit shortens r until it encodes (in enc, into buf) to at most MaxLine
// bytes, so that the reader, which skips a longer line as torn, reads every
// record the writer writes: --capture full with --max-observe past 16 MiB
// once wrote a call's answer as a record no reader counted. The biggest
// field is cut (a string keeps its start and ends with "…", a list its first
// elements) until the line fits, and the cut keys are listed under "cut".
func (r *Record) fit(buf *bytes.Buffer, encode func()) {
	var cut []string
	for tries := 0; buf.Len() > MaxLine && tries < 8; tries++ {
		i, size := biggest(r.Fields)
		if i < 0 {
			return // nothing left to cut: no field of the shim's is that big
		}
		// Keep the share of the field that fits, with room for escaping and
		// the rest of the record.
		keep := int(int64(size) * (MaxLine - 64<<10) / int64(buf.Len()))
		f := &r.Fields[i]
		switch v := f.Value.(type) {
		case string:
			for keep > 0 && keep < len(v) && !utf8.RuneStart(v[keep]) {
				keep--
			}
			f.Value = v[:min(keep, len(v))] + "…"
		case []string:
			f.Value = v[:min(len(v)*keep/max(size, 1), len(v)-1)]
		case []Field:
			f.Value = v[:min(len(v)*keep/max(size, 1), len(v)-1)]
		}
		if !slices.Contains(cut, f.Key) {
			cut = append(cut, f.Key)
		}
		if r.Fields[len(r.Fields)-1].Key == "cut" {
			r.Fields = r.Fields[:len(r.Fields)-1]
		}
		r.Fields = append(r.Fields, F("cut", slices.Clone(cut)))
		encode()
	}
}

// biggest finds the field whose value takes the most bytes, roughly.
func biggest(fields []Field) (index, size int) {
	index = -1
	for i, f := range fields {
		n := 0
		switch v := f.Value.(type) {
		case string:
			n = len(v)
		case []string:
			for _, s := range v {
				n += len(s) + 3
			}
		case []Field:
			for _, sub := range v {
				n += len(sub.Key) + len(fmt.Sprint(sub.Value)) + 4
			}
		}
		if n > size {
			index, size = i, n
		}
	}
	return index, size
}
