// Command echo is the benchmark's MCP server: it answers initialize and each
// tools/call request line with one response line. The "echo" tool answers with
// a small result; the "huge" tool answers with one line of exactly
// arguments.bytes bytes (newline included), streamed from a small buffer so
// the server's own memory stays small.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
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
		} `json:"arguments"`
	} `json:"params"`
}

func serve(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	var line []byte
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("request %q: %w", sc.Bytes(), err)
		}
		if req.ID == nil {
			continue // a notification
		}
		line = line[:0]
		switch {
		case req.Method == "initialize":
			line = fmt.Appendf(line, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}}`+"\n", req.ID)
		case req.Method == "tools/call" && req.Params.Name == "huge":
			if err := writeHuge(out, req.ID, req.Params.Arguments.Bytes); err != nil {
				return err
			}
			continue
		default:
			line = fmt.Appendf(line, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", req.ID)
		}
		if _, err := out.Write(line); err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	return sc.Err()
}

// writeHuge writes one response line of exactly size bytes, newline included.
func writeHuge(out io.Writer, id []byte, size int) error {
	head := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	tail := []byte("\"}]}}\n")
	pad := size - len(head) - len(tail)
	if pad < 0 {
		return fmt.Errorf("huge: %d bytes is too small for a response", size)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
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
