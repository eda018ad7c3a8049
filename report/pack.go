package report

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// A Run is about 1 KiB as a Go value, nearly all of it empty fields: a
// million runs held as values took 5 GB. Kept packed, a run costs the fields
// it has (about 200 bytes), and its JSON is written from the same field list
// without encoding/json's reflection, which took 17 µs a run.
//
// The field list is read once from Run's type: every field --json shows (its
// json tag), in the order encoding/json writes them. A field's kind must be
// one the list knows (string, int, bool, float64, *int, []string, time.Time
// in UTC, or a struct of those); another panics when the list is made, which
// every test of this package does.

// leaf is one field of Run: where it is, what it holds, how its JSON reads.
type leaf struct {
	off                 uintptr // from the start of the Run
	kind                kind
	name                string // "\"name\": "
	omitEmpty, omitZero bool
	children            []leaf // a struct's own fields
	index               int    // among the packed fields
}

type kind uint8

const (
	kString kind = iota
	kInt
	kBool
	kFloat
	kIntPtr
	kStrings
	kTime
	kStruct
)

var runFields = sync.OnceValue(func() []leaf {
	n := 0
	return fieldsOf(reflect.TypeFor[Run](), 0, &n)
})

// fieldsOf lists t's fields as encoding/json sees them: embedded structs
// without a name of their own are flattened in place, json:"-" is left out.
func fieldsOf(t reflect.Type, base uintptr, n *int) []leaf {
	var out []leaf
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldsOf(f.Type, base+f.Offset, n)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		l := leaf{off: base + f.Offset, name: `"` + name + `": `}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				l.omitEmpty = true
			case "omitzero":
				l.omitZero = true
			case "":
			default:
				panic(fmt.Sprintf("report: Run field %s: json option %q unknown to the packed form", f.Name, o))
			}
		}
		switch ft := f.Type; {
		case ft == reflect.TypeFor[time.Time]():
			l.kind = kTime
		case ft.Kind() == reflect.String:
			l.kind = kString
		case ft.Kind() == reflect.Int:
			l.kind = kInt
		case ft.Kind() == reflect.Bool:
			l.kind = kBool
		case ft.Kind() == reflect.Float64:
			l.kind = kFloat
		case ft == reflect.TypeFor[*int]():
			l.kind = kIntPtr
		case ft == reflect.TypeFor[[]string]():
			l.kind = kStrings
		case ft.Kind() == reflect.Struct:
			l.kind = kStruct
			l.children = fieldsOf(ft, base+f.Offset, n)
			out = append(out, l)
			continue
		default:
			panic(fmt.Sprintf("report: Run field %s: type %s unknown to the packed form", f.Name, ft))
		}
		l.index = *n
		*n++
		for _, o := range out {
			if o.name == l.name {
				panic(fmt.Sprintf("report: Run field %s: JSON name %s twice", f.Name, name))
			}
		}
		out = append(out, l)
	}
	return out
}

func at[T any](r *Run, l *leaf) *T { return (*T)(unsafe.Add(unsafe.Pointer(r), l.off)) }

// zero reports whether the field holds its zero value, as omitzero means it
// (a time: IsZero; a float: its bits, so -0 is not zero).
func (l *leaf) zero(r *Run) bool {
	switch l.kind {
	case kString:
		return *at[string](r, l) == ""
	case kInt:
		return *at[int](r, l) == 0
	case kBool:
		return !*at[bool](r, l)
	case kFloat:
		return math.Float64bits(*at[float64](r, l)) == 0
	case kIntPtr:
		return *at[*int](r, l) == nil
	case kStrings:
		return *at[[]string](r, l) == nil
	case kTime:
		return at[time.Time](r, l).IsZero()
	}
	for i := range l.children {
		if !l.children[i].zero(r) {
			return false
		}
	}
	return true
}

// empty reports whether the field is empty, as omitempty means it: a struct
// or a time never is, -0 is, and so is a list of nothing.
func (l *leaf) empty(r *Run) bool {
	switch l.kind {
	case kFloat:
		return *at[float64](r, l) == 0
	case kStrings:
		return len(*at[[]string](r, l)) == 0
	case kTime, kStruct:
		return false
	}
	return l.zero(r)
}

// pack appends r's fields that are not zero: each its index, then its value.
func (r *Run) pack(b []byte) []byte {
	var walk func(ls []leaf)
	walk = func(ls []leaf) {
		for i := range ls {
			l := &ls[i]
			if l.kind == kStruct {
				walk(l.children)
				continue
			}
			if l.zero(r) {
				continue
			}
			b = binary.AppendUvarint(b, uint64(l.index))
			switch l.kind {
			case kString:
				b = appendBytes(b, *at[string](r, l))
			case kInt:
				b = binary.AppendVarint(b, int64(*at[int](r, l)))
			case kFloat:
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*at[float64](r, l)))
			case kIntPtr:
				b = binary.AppendVarint(b, int64(**at[*int](r, l)))
			case kStrings:
				l := *at[[]string](r, l)
				b = binary.AppendUvarint(b, uint64(len(l)))
				for _, s := range l {
					b = appendBytes(b, s)
				}
			case kTime:
				b = binary.AppendVarint(b, at[time.Time](r, l).UnixNano())
			}
		}
	}
	walk(runFields())
	return b
}

func appendBytes(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// packed is the flat list of packed fields, by index.
var packed = sync.OnceValue(func() []*leaf {
	var out []*leaf
	var walk func(ls []leaf)
	walk = func(ls []leaf) {
		for i := range ls {
			if ls[i].kind == kStruct {
				walk(ls[i].children)
			} else {
				out = append(out, &ls[i])
			}
		}
	}
	walk(runFields())
	return out
})

// unpack reads what pack wrote into r, which must be zero. r's strings share
// b's bytes, which must not change while r is in use.
func (r *Run) unpack(b []byte) {
	fields := packed()
	for len(b) > 0 {
		i, n := binary.Uvarint(b)
		b = b[n:]
		l := fields[i]
		switch l.kind {
		case kString:
			*at[string](r, l), b = readString(b)
		case kInt:
			v, n := binary.Varint(b)
			*at[int](r, l), b = int(v), b[n:]
		case kBool:
			*at[bool](r, l) = true
		case kFloat:
			*at[float64](r, l), b = math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:]
		case kIntPtr:
			v, n := binary.Varint(b)
			p := int(v)
			*at[*int](r, l), b = &p, b[n:]
		case kStrings:
			count, n := binary.Uvarint(b)
			b = b[n:]
			l := make([]string, count)
			for k := range l {
				l[k], b = readString(b)
			}
			*at[[]string](r, fields[i]) = l
		case kTime:
			v, n := binary.Varint(b)
			*at[time.Time](r, l), b = time.Unix(0, v).UTC(), b[n:]
		}
	}
}

// readString reads a string pack wrote. It shares b's bytes, which the
// Store never changes once written: unpacking a million runs twice (the
// table's widths, then its rows) made 20 million copies.
func readString(b []byte) (string, []byte) {
	n, k := binary.Uvarint(b)
	end := k + int(n)
	if n == 0 {
		return "", b[end:]
	}
	return unsafe.String(&b[k], int(n)), b[end:]
}

// packedID is the run id of a packed run, its first field, as bytes of b.
func packedID(b []byte) []byte {
	i, n := binary.Uvarint(b)
	if i != 0 || n <= 0 {
		return nil
	}
	size, k := binary.Uvarint(b[n:])
	return b[n+k : n+k+int(size)]
}
