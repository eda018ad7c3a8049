package remote

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// event is one server-sent event: its id, its type (the event field, ""
// for the default "message") and its data lines joined by "\n".
type event struct {
	id   string
	typ  string
	data []byte
}

// readSize is the reader's buffer; longer lines are read whole, as an SSE
// data line is a whole JSON-RPC message.
const readSize = 64 << 10

// errTooLarge is a message past the bridge's cap (--max-message).
var errTooLarge = errors.New("the message is over --max-message")

// sseReader reads an event stream (WHATWG HTML, "Interpreting an event
// stream"): lines end with CRLF, LF or a lone CR. It reads from a
// bufio.Reader, never a Scanner: a data line is as long as the message it
// carries, up to max bytes for one event.
type sseReader struct {
	br      *bufio.Reader
	max     int64
	lastID  string        // the last event id seen, for Last-Event-ID
	retry   time.Duration // the last retry field: how long to wait before reconnecting; 0 when none came
	afterCR bool          // the last line ended with CR: an LF right after it belongs to it
}

func newSSEReader(r io.Reader, max int64) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, readSize), max: max}
}

// next returns the next event with data. Comments and events without data
// are skipped; their ids and retry fields still count. It returns io.EOF
// (or the read error) at the end, errTooLarge past max.
func (s *sseReader) next() (event, error) {
	var ev event
	var data [][]byte
	size := int64(0)
	for {
		line, err := s.readLine(s.max - size)
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 { // dispatch
			if ev.id != "" {
				s.lastID = ev.id
			}
			var joined []byte
			if len(data) == 1 {
				joined = data[0] // one data line, the common case: no copy
			} else if len(data) > 1 {
				joined = bytes.Join(data, []byte("\n"))
			}
			if len(bytes.TrimSpace(joined)) == 0 {
				// No message: a priming event that only carries an id to
				// resume from (the TypeScript SDK sends one first).
				ev, data, size = event{}, nil, 0
				continue
			}
			ev.data = joined
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			data = append(data, value) // line is the reader's own: no copy
			size += int64(len(value)) + 1
		case "event":
			ev.typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		case "retry":
			// "If the field value consists of only ASCII digits, then
			// interpret the field value as an integer in base ten, and set
			// the event stream's reconnection time to that integer."
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && value[0] != '+' {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLine returns one line without its ending, in a slice of its own; past
// max bytes it returns errTooLarge.
func (s *sseReader) readLine(max int64) ([]byte, error) {
	if s.afterCR {
		s.afterCR = false
		if b, err := s.br.Peek(1); err == nil && b[0] == '\n' {
			s.br.Discard(1)
		}
	}
	var line []byte
	for {
		n := s.br.Buffered()
		if n == 0 {
			if _, err := s.br.Peek(1); err != nil {
				if len(line) > 0 && err == io.EOF {
					err = io.ErrUnexpectedEOF // a stream cut inside an event
				}
				return nil, err
			}
			n = s.br.Buffered()
		}
		buf, _ := s.br.Peek(n)
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			i = n
		}
		if int64(len(line)+i) > max {
			return nil, errTooLarge
		}
		line = append(line, buf[:i]...)
		if i == n {
			s.br.Discard(n)
			continue
		}
		s.afterCR = buf[i] == '\r'
		s.br.Discard(i + 1)
		if line == nil {
			line = []byte{}
		}
		return line, nil
	}
}
