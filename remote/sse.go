package remote

import (
	"bufio"
	"bytes"
	"io"
)

// event is one server-sent event: its id and its data lines joined by "\n".
type event struct {
	id   string
	data []byte
}

// readSize is the reader's buffer; longer lines are read whole, as an SSE
// data line is a whole JSON-RPC message.
const readSize = 64 << 10

// sseReader reads an event stream (WHATWG HTML, "Interpreting an event
// stream"). It reads with bufio.Reader, line by line, never a Scanner: a
// data line is as long as the message it carries.
type sseReader struct {
	br     *bufio.Reader
	lastID string // the last event id seen, for Last-Event-ID
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, readSize)} }

// next returns the next event with data. Comments, retry fields and events
// without data are skipped; their ids still count for Last-Event-ID. It returns io.EOF (or the read error) at the end.
func (s *sseReader) next() (event, error) {
	var ev event
	var data [][]byte
	for {
		line, err := s.readLine()
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 { // dispatch
			if ev.id != "" {
				s.lastID = ev.id
			}
			joined := bytes.Join(data, []byte("\n"))
			if len(bytes.TrimSpace(joined)) == 0 {
				// No message: a priming event that only carries an id to
				// resume from (the TypeScript SDK sends one first).
				ev, data = event{}, nil
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
			data = append(data, append([]byte(nil), value...))
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		}
	}
}

// readLine returns one line without its CR, LF or CRLF ending.
func (s *sseReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(line) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF // a stream cut inside an event
			}
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, nil
	}
}
