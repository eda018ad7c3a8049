// Command echo is the benchmark's MCP server: it answers initialize and each
// tools/call request line with one response line. The "echo" tool answers with
// a small result; the "huge" tool answers with one line of exactly
// arguments.bytes bytes (newline included), streamed from a small buffer so
// the server's own memory stays small; the "flood" tool writes
// arguments.lines notifications/progress lines of arguments.bytes bytes each
// before its small result. Notification lines from the client are skipped
// unparsed, and a request line longer than the read buffer (a huge client
// line) is answered from its id alone, so the server is never what a
// benchmark of the relay in front of it measures.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcpshim-dev/mcpshim/bench/relay/progress"
)

func main() {
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	if err := serve(os.Stdin, out); err != nil {
		fmt.Fprintf(os.Stderr, "echo: %v\n", err)
		os.Exit(1)
	}
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Bytes int `json:"bytes"`
			Lines int `json:"lines"`
		} `json:"arguments"`
	} `json:"params"`
}

// notification is how every notification line the driver sends begins.
var notification = []byte(`{"jsonrpc":"2.0","method":"notifications/`)

// serve answers requests until in ends. out is flushed whenever no further
// request is already buffered, so a response never waits on the next request.
func serve(in io.Reader, out *bufio.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A huge request line: its id is near the start; skip the rest.
			id := bytes.Clone(idOf(chunk)) // the next reads reuse the buffer
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return ioEnd(err)
			}
			line = fmt.Appendf(line[:0], `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", id)
			if _, err := out.Write(line); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
		} else if len(bytes.TrimSpace(chunk)) > 0 && !bytes.HasPrefix(chunk, notification) {
			if err := answer(out, chunk, &line); err != nil {
				return err
			}
		}
		if br.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
		}
		if err != nil {
			return ioEnd(err)
		}
	}
}

func ioEnd(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// idOf finds the value of the first "id" member in the start of a line.
func idOf(b []byte) []byte {
	_, rest, ok := bytes.Cut(b, []byte(`"id":`))
	if !ok {
		return []byte("null")
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return []byte("null")
	}
	return rest[:end]
}

func answer(out *bufio.Writer, raw []byte, line *[]byte) error {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return fmt.Errorf("request %q: %w", raw, err)
	}
	if req.ID == nil {
		return nil // a notification
	}
	switch {
	case req.Method == "initialize":
		*line = fmt.Appendf((*line)[:0], `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}}`+"\n", req.ID)
	case req.Method == "tools/call" && req.Params.Name == "huge":
		return writeHuge(out, req.ID, req.Params.Arguments.Bytes)
	case req.Method == "tools/call" && req.Params.Name == "flood":
		if err := writeFlood(out, req.Params.Arguments.Lines, req.Params.Arguments.Bytes); err != nil {
			return err
		}
		fallthrough
	default:
		*line = fmt.Appendf((*line)[:0], `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", req.ID)
	}
	if _, err := out.Write(*line); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}

// writeFlood writes n progress lines of size bytes.
func writeFlood(out io.Writer, n, size int) error {
	one := progress.Line(max(size, 120))
	for range n {
		if _, err := out.Write(one); err != nil {
			return fmt.Errorf("write flood: %w", err)
		}
	}
	return nil
}

// writeHuge writes one response line of exactly size bytes, newline included.
func writeHuge(out io.Writer, id []byte, size int) error {
	head := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	tail := []byte("\"}]}}\n")
	pad := size - len(head) - len(tail)
	if pad < 0 {
		return fmt.Errorf("huge: %d bytes is too small for a response", size)
	}
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	if _, err := out.Write(head); err != nil {
		return fmt.Errorf("write huge: %w", err)
	}
	for pad > 0 {
		n := min(pad, len(chunk))
		if _, err := out.Write(chunk[:n]); err != nil {
			return fmt.Errorf("write huge: %w", err)
		}
		pad -= n
	}
	if _, err := out.Write(tail); err != nil {
		return fmt.Errorf("write huge: %w", err)
	}
	return nil
}
