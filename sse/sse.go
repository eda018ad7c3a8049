// Package sse reads event streams (WHATWG HTML, "Interpreting an event
// stream"), bounded: one parser for the bridge's streams and the probe's.
// Lines end with CRLF, LF or a lone CR; an event's data may be read as a
// stream, so a long message is never held by the parser.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one server-sent event: its id, its type (the event field, ""
// for the default "message") and its data lines joined by "\n".
type Event struct {
	ID   string
	Type string
	Data []byte
}

// readSize is the reader's buffer; longer lines are read in pieces.
const readSize = 64 << 10

// ErrTooLarge is an event whose data is past the reader's bound.
var ErrTooLarge = errors.New("an event is over the size limit")

// Reader reads an event stream. An event's data is read as a stream
// (NextData), so a 64 MiB message is never held by the parser; a data line
// is read from a bufio.Reader in pieces, never with a Scanner.
type Reader struct {
	br *bufio.Reader
	// max bounds the data of one event; a field line other than data is
	// bounded by the smaller of it and the buffer.
	max int64
	// LastID is the last event id seen, for Last-Event-ID.
	LastID string
	// Retry is the last retry field: how long to wait before reconnecting;
	// 0 when none came. The caller caps it.
	Retry   time.Duration
	afterCR bool // the last line ended with CR: an LF right after it belongs to it

	ev     Event // the id and type of the event being read
	handed bool  // the event has data: its reader was handed out
	inLine bool  // inside a data line's value
	size   int64 // data bytes of the event so far
	err    error // the stream's error, once it came
}

// What lineStart found.
const (
	otherLine = iota // a field or comment, handled
	dataLine         // "data:": the value follows (inLine)
	emptyData        // "data" alone: an empty value, already read
)

// NewReader reads the event stream r; max bounds one event's data.
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readSize), max: max}
}

// Type is the type of the event NextData returned last ("" for the
// default, "message").
func (s *Reader) Type() string { return s.ev.Type }

// Next returns the next event with data, read whole (up to max). Comments
// and events without data are skipped; their ids and retry fields still
// count. It returns io.EOF (or the read error) at the end, ErrTooLarge past
// max, io.ErrUnexpectedEOF for a stream cut inside an event.
func (s *Reader) Next() (Event, error) {
	for {
		d, err := s.NextData()
		if err != nil {
			return Event{}, err
		}
		data, err := io.ReadAll(d)
		if err != nil {
			return Event{}, err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			return Event{ID: s.ev.ID, Type: s.ev.Type, Data: data}, nil
		}
		// No message: a priming event that only carries an id to resume
		// from (the TypeScript SDK sends one first).
	}
}

// NextData skips to the next event that has data and returns a reader of
// its data (its data lines joined by "\n"), which ends with io.EOF at the
// blank line that ends the event; the event's id and type are in s.ev then.
// An event whose data is empty is returned too (a priming event carries an
// id and an empty data line): the caller skips what is only whitespace.
func (s *Reader) NextData() (io.Reader, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.ev, s.size, s.handed, s.inLine = Event{}, 0, false, false
	for {
		kind, err := s.lineStart()
		if err != nil {
			s.err = err
			return nil, err
		}
		if kind != otherLine {
			s.handed, s.inLine = true, kind == dataLine
			return dataReader{s}, nil
		}
	}
}

// dataReader is the data of the event being read.
type dataReader struct{ s *Reader }

func (d dataReader) Read(p []byte) (int, error) { return d.s.readData(p) }

// readData reads the current data line's value; at its end, the next lines
// are read until another data line ("\n" is its first byte) or the blank
// line that ends the event (io.EOF).
func (s *Reader) readData(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for !s.inLine {
		kind, err := s.lineStart()
		switch {
		case err == errEventEnd:
			return 0, io.EOF
		case err != nil:
			s.err = err
			return 0, err
		case kind != otherLine:
			s.inLine = kind == dataLine
			s.size++
			if s.size > s.max {
				s.err = ErrTooLarge
				return 0, s.err
			}
			p[0] = '\n' // between two data lines
			return 1, nil
		}
	}
	if err := s.fill(); err != nil {
		s.err = cut(err)
		return 0, s.err
	}
	buf, _ := s.br.Peek(s.br.Buffered())
	i := bytes.IndexAny(buf, "\r\n")
	if i < 0 {
		i = len(buf)
	}
	n := copy(p, buf[:i])
	s.size += int64(n)
	if s.size > s.max {
		s.err = ErrTooLarge
		return 0, s.err
	}
	s.br.Discard(n)
	if n == i && i < len(buf) { // the line ends here
		s.afterCR = buf[i] == '\r'
		s.br.Discard(1)
		s.inLine = false
	}
	return n, nil
}

// errEventEnd is lineStart's report of the blank line that ends an event.
var errEventEnd = errors.New("end of event")

// lineStart reads the start of the next line: for a data line it consumes
// "data:" and one space and reports true; any other line it reads whole and
// handles (id, event, retry; comments and unknown fields are ignored). A
// blank line is errEventEnd when the event had data, and dispatches its id.
func (s *Reader) lineStart() (int, error) {
	if s.afterCR {
		s.afterCR = false
		if b, err := s.br.Peek(1); err == nil && b[0] == '\n' {
			s.br.Discard(1)
		}
	}
	// Peek byte by byte, stopping at the first byte that is not "data:"'s:
	// a short line's end comes with it, so this never waits for bytes the
	// server has no reason to send yet.
	isData := false
	for k := 1; k <= 5 && !isData; k++ {
		b, err := s.br.Peek(k)
		if err != nil {
			if len(b) > 0 || s.handed || s.ev.ID != "" || s.ev.Type != "" {
				err = cut(err)
			}
			return otherLine, err
		}
		if b[k-1] != "data:"[k-1] {
			break
		}
		isData = k == 5
	}
	if isData {
		s.br.Discard(5)
		if b, err := s.br.Peek(1); err == nil && b[0] == ' ' {
			s.br.Discard(1)
		}
		return dataLine, nil
	}
	line, err := s.readLine(min(s.max, readSize))
	if err == ErrTooLarge {
		err = nil // a field this long is no field the bridge needs: skipped
	}
	if err != nil {
		return otherLine, err
	}
	if len(line) == 0 {
		if s.ev.ID != "" {
			s.LastID = s.ev.ID
		}
		if s.handed {
			return otherLine, errEventEnd
		}
		s.ev, s.size = Event{}, 0
		return otherLine, nil
	}
	if line[0] == ':' {
		return otherLine, nil
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data": // "data" alone: an empty data line
		return emptyData, nil
	case "event":
		s.ev.Type = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.ev.ID = string(value)
		}
	case "retry":
		// "If the field value consists of only ASCII digits, then
		// interpret the field value as an integer in base ten, and set
		// the event stream's reconnection time to that integer."
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && value[0] != '+' {
			s.Retry = time.Duration(ms) * time.Millisecond
		}
	}
	return otherLine, nil
}

// fill makes sure some bytes of the current line are buffered.
func (s *Reader) fill() error {
	if s.br.Buffered() > 0 {
		return nil
	}
	_, err := s.br.Peek(1)
	return err
}

// cut is a read error inside an event: io.EOF there is a stream cut short.
func cut(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readLine returns one line without its ending, in a slice of its own; past
// max bytes it skips the rest of the line and returns ErrTooLarge.
func (s *Reader) readLine(max int64) ([]byte, error) {
	var line []byte
	over := false
	for {
		if err := s.fill(); err != nil {
			if len(line) > 0 || over {
				err = cut(err)
			}
			return nil, err
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		end := i >= 0
		if !end {
			i = len(buf)
		}
		if !over && int64(len(line)+i) > max {
			over, line = true, nil
		}
		if !over {
			line = append(line, buf[:i]...)
		}
		if !end {
			s.br.Discard(i)
			continue
		}
		s.afterCR = buf[i] == '\r'
		s.br.Discard(i + 1)
		if over {
			return nil, ErrTooLarge
		}
		if line == nil {
			line = []byte{}
		}
		return line, nil
	}
}
