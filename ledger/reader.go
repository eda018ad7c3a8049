package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxLine is the longest line the reader accepts as a record; a longer line
// is skipped whole. The writer never writes a longer one (Record.fit).
const MaxLine = 16 << 20

// Scanner reads ledger records from one stream. It never trusts the stream:
// a line that is not a whole ledger record (torn by a crash, garbage, too
// long) is skipped and counted, and a record glued onto the end of a torn
// line is still found. Unknown events and fields are kept.
//
// It is the fast path beside Decode: it accepts exactly the lines that are
// valid JSON and that Decode accepts, and its Entry agrees with Decode's
// field for field. It allocates per distinct string, not per line.
type Scanner struct {
	r       *bufio.Reader
	long    []byte // a line longer than the bufio buffer
	entry   Entry
	skipped int
	err     error
	intern  map[string]string

	// The current record, which entry's accessors read.
	line   []byte
	fields []field        // the event's fields, in line order
	common [nCommon]field // the record's own fields, which Decode keeps out of Fields
	prev   [nCommon]string
}

// NewScanner reads records from r.
func NewScanner(r io.Reader) *Scanner {
	s := &Scanner{r: bufio.NewReaderSize(r, 1<<20), intern: make(map[string]string)}
	s.entry.sc = s
	return s
}

// Scan advances to the next record, skipping lines that are not records. It
// returns false at the end of the stream or on a read error (see Err).
func (s *Scanner) Scan() bool {
	for s.err == nil {
		line, ok := s.readLine()
		if !ok {
			return false
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if s.parse(line) {
			return true
		}
		if s.recover(line) {
			s.skipped++ // the torn record the good one was glued to
			return true
		}
		s.skipped++
	}
	return false
}

// recover finds a whole record after the start of a bad line: a writer that
// crashed mid-line leaves a torn record with no newline, and the next writer's
// record lands on the same line.
func (s *Scanner) recover(line []byte) bool {
	marker := []byte(`{"ts":`)
	for tries, from := 0, 1; tries < 8 && from < len(line); tries++ {
		i := bytes.Index(line[from:], marker)
		if i < 0 {
			return false
		}
		if s.parse(line[from+i:]) {
			return true
		}
		from += i + 1
	}
	return false
}

// readLine returns the next line without its newline; the slice is valid
// until the next call. Lines longer than MaxLine are skipped here.
func (s *Scanner) readLine() ([]byte, bool) {
	s.long = s.long[:0]
	tooLong := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		switch {
		case err == nil && len(s.long) == 0 && !tooLong:
			return chunk[:len(chunk)-1], true
		case err == nil || err == bufio.ErrBufferFull || err == io.EOF:
			if !tooLong && len(s.long)+len(chunk) <= MaxLine+1 {
				s.long = append(s.long, chunk...)
			} else {
				tooLong = true
				s.long = s.long[:0]
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if tooLong {
				s.skipped++
				tooLong = false
				if err == io.EOF {
					return nil, false
				}
				continue
			}
			if err == io.EOF {
				if len(s.long) == 0 {
					return nil, false
				}
				return s.long, true // a last line without its newline
			}
			return s.long[:len(s.long)-1], true
		default:
			s.err = err
			return nil, false
		}
	}
}

// Entry is the current record; it is overwritten by the next Scan.
func (s *Scanner) Entry() *Entry { return &s.entry }

// Line is the current record's raw line, valid until the next Scan.
func (s *Scanner) Line() []byte { return s.line }

// Decode decodes the current record whole, into an Entry that outlives the
// next Scan.
func (s *Scanner) Decode() (Entry, error) { return Decode(s.line) }

// Skipped is how many lines so far were not records.
func (s *Scanner) Skipped() int { return s.skipped }

// Err is the read error that ended the scan, if any.
func (s *Scanner) Err() error { return s.err }

// str returns b as a string, sharing one copy per distinct short value: run
// ids, names and event words repeat on every line.
func (s *Scanner) str(b []byte) string {
	if len(b) > 128 {
		return string(b)
	}
	if v, ok := s.intern[string(b)]; ok {
		return v
	}
	if len(s.intern) >= 1<<14 {
		clear(s.intern) // bounded: a ledger can hold any number of distinct values
	}
	v := string(b)
	s.intern[v] = v
	return v
}

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
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return false // no ts
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		kEnd, kEsc, ok := scanString(line, i)
		if !ok {
			return false
		}
		f := field{keyStart: i + 1, keyEnd: kEnd - 1}
		if kEsc {
			f.unquoted, f.keyEnd = unquote(line[i:kEnd]), -1
		}
		i = skipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		end, esc, ok := scanValue(line, i, 1)
		if !ok {
			return false
		}
		f.start, f.end, f.kind, f.escaped = i, end, kindOf(line[i]), esc
		if c := commonIndex(s.key(&f)); c >= 0 {
			s.common[c] = f
		} else {
			s.fields = append(s.fields, f)
		}
		i = skipSpace(line, end)
		if i >= len(line) {
			return false
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return false
		}
		i = skipSpace(line, i+1)
	}
	if skipSpace(line, i+1) != len(line) {
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
	text := ""
	if ts.escaped {
		text = unquote(s.line[ts.start:ts.end])
	} else {
		text = string(s.line[ts.start+1 : ts.end-1])
	}
	t, err := time.Parse(time.RFC3339Nano, text)
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

func commonIndex(key string) int {
	switch key {
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// maxDepth is encoding/json's nesting limit, so both reject the same lines.
const maxDepth = 10000

// scanValue validates the JSON value at b[i:] and returns where it ends, and
// for a string whether it needs unescaping.
func scanValue(b []byte, i, depth int) (end int, escaped, ok bool) {
	if i >= len(b) {
		return 0, false, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		if depth+1 > maxDepth {
			return 0, false, false
		}
		return scanComposite(b, i, depth+1)
	case c == '-' || c >= '0' && c <= '9':
		end, ok = scanNumber(b, i)
		return end, false, ok
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return 0, false, false
}

func literal(b []byte, i int, word string) (int, bool, bool) {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return 0, false, false
	}
	return i + len(word), false, true
}

// scanComposite validates an object or array starting at b[i].
func scanComposite(b []byte, i, depth int) (int, bool, bool) {
	closer := byte(']')
	if b[i] == '{' {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, false, true
	}
	for {
		if closer == '}' {
			if i >= len(b) || b[i] != '"' {
				return 0, false, false
			}
			end, _, ok := scanString(b, i)
			if !ok {
				return 0, false, false
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false, false
			}
			i = skipSpace(b, i+1)
		}
		end, _, ok := scanValue(b, i, depth)
		if !ok {
			return 0, false, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false, false
		}
		if b[i] == closer {
			return i + 1, false, true
		}
		if b[i] != ',' {
			return 0, false, false
		}
		i = skipSpace(b, i+1)
	}
}

// scanString validates the string whose opening quote is b[i]. escaped is
// true when its text differs from its bytes: escapes or non-ASCII bytes,
// which encoding/json may replace.
func scanString(b []byte, i int) (end int, escaped, ok bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		if plain[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return 0, false, false
		case c >= 0x80:
			escaped = true
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false, false
					}
				}
				i += 4
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// plain marks the bytes a string holds as they are: printable ASCII but the
// quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scanNumber validates a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	return i, true
}

// Files lists the ledger files named by paths, each once: a file as given, a
// directory as every *.jsonl directly in it. Rotated files of a ledger come
// before the live one, oldest first, so records come out in about the order
// they were written. A path that does not exist is an error.
func Files(paths []string) ([]string, error) {
	var out []string
	var seen []os.FileInfo
	add := func(path string, fi os.FileInfo) {
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return
			}
		}
		seen = append(seen, fi)
		out = append(out, path)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", p, err)
		}
		if !fi.IsDir() {
			add(p, fi)
			continue
		}
		names, err := filepath.Glob(filepath.Join(p, "*.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", p, err)
		}
		sort.Slice(names, func(i, j int) bool {
			bi, ti := SplitRotated(names[i])
			bj, tj := SplitRotated(names[j])
			if bi != bj {
				return bi < bj
			}
			if ti.IsZero() != tj.IsZero() {
				return tj.IsZero() // the live file last
			}
			return ti.Before(tj)
		})
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil && fi.Mode().IsRegular() {
				add(n, fi)
			}
		}
	}
	return out, nil
}

// SplitRotated undoes RotatedName: it returns the live ledger's path and the
// rotation time, or path itself and the zero time for a live ledger.
func SplitRotated(path string) (live string, rotated time.Time) {
	base := strings.TrimSuffix(path, ".jsonl")
	dot := strings.LastIndexByte(base, '.')
	if dot < 0 {
		return path, time.Time{}
	}
	// The stamp itself holds a dot: name.20261129T154000.123Z
	if d := strings.LastIndexByte(base[:dot], '.'); d >= 0 {
		if t, err := time.Parse("20060102T150405.000Z", base[d+1:]); err == nil {
			return base[:d] + ".jsonl", t
		}
	}
	return path, time.Time{}
}
