package ledger

import (
	"bufio"
	"bytes"
	"hash/maphash"
	"io"
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
	// Filter, when set, passes over the lines it refuses unread: they are
	// neither records nor skipped. A second pass after a few runs asks only
	// for the lines that hold their ids.
	Filter func(line []byte) bool

	r       *bufio.Reader
	long    []byte // a line longer than the bufio buffer
	entry   Entry
	skipped int
	err     error
	strs    [1 << 12]string // recent distinct short strings, by a hash of their bytes
	seed    maphash.Seed
	clock   clock

	// The current record, which entry's accessors read.
	line   []byte
	fields []field        // the event's fields, in line order
	common [nCommon]field // the record's own fields, which Decode keeps out of Fields
	prev   [nCommon]string
}

// NewScanner reads records from r.
func NewScanner(r io.Reader) *Scanner {
	s := &Scanner{r: bufio.NewReaderSize(r, 1<<20), seed: maphash.MakeSeed()}
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
		if len(bytes.TrimSpace(line)) == 0 || s.Filter != nil && !s.Filter(line) {
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

// str returns b as a string, sharing one copy per distinct short value while
// it recurs: names, event words and a run's id repeat from line to line. The
// cache is a fixed table, so a ledger of any number of distinct values costs
// the same.
func (s *Scanner) str(b []byte) string {
	if len(b) > 128 {
		return string(b)
	}
	slot := &s.strs[maphash.Bytes(s.seed, b)&(uint64(len(s.strs))-1)]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}
