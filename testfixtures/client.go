package testfixtures

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

var (
	// ErrNotJSON means the server wrote a line that is not a JSON message, such as a banner.
	ErrNotJSON = errors.New("server wrote a line that is not JSON")
	// ErrServerRequest means the server sent a request (such as sampling/createMessage)
	// while a call was waiting for its response.
	ErrServerRequest = errors.New("server sent a request while a call was pending")
	// ErrRPC means the server answered a handshake with a JSON-RPC error.
	ErrRPC = errors.New("server answered with a JSON-RPC error")
)

// defaultReadTimeout bounds a read whose context carries no deadline.
const defaultReadTimeout = 10 * time.Second

// Client speaks line-delimited JSON-RPC to a server over w/r with a deadline on
// every read. One goroutine reads r and feeds a channel, so a read that times out
// leaves nothing blocked behind it: the line it was waiting for goes to the next read.
// Send may be called from any goroutine; reads (ReadLine, Call, Handshake) from one
// at a time.
type Client struct {
	// OnNoise, when set, is given each line that is not JSON while a call
	// waits, and the call goes on, as a lenient client (Claude Code) skips a
	// banner. Unset, such a line fails the call with ErrNotJSON.
	OnNoise func(line []byte)

	mu    sync.Mutex // serialises writes
	w     io.Writer
	lines <-chan lineResult
	err   error // the reader's final error, once seen
}

type lineResult struct {
	line []byte
	err  error
}

// NewClient starts reading r in the background; the reader ends when r does.
func NewClient(w io.Writer, r io.Reader) *Client {
	lines := make(chan lineResult, 16)
	go readLines(bufio.NewReaderSize(r, 64<<10), lines)
	return &Client{w: w, lines: lines}
}

// readLines sends each line without its '\n'; the last send carries the error,
// with a torn final line reported as io.ErrUnexpectedEOF.
func readLines(r *bufio.Reader, lines chan<- lineResult) {
	for {
		line, err := r.ReadBytes('\n')
		if err == nil {
			lines <- lineResult{line: line[:len(line)-1]}
			continue
		}
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		lines <- lineResult{line: line, err: err}
		return
	}
}

// Send writes msg and a newline in one Write.
func (c *Client) Send(msg string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.w, msg+"\n"); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// ReadLine returns the next line the server wrote, without its newline. It waits
// until ctx ends, or defaultReadTimeout if ctx has no deadline. After the server's
// stream ends every call returns that error; a torn last line comes back once with
// io.ErrUnexpectedEOF.
func (c *Client) ReadLine(ctx context.Context) ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	ctx, cancel := withReadDeadline(ctx)
	defer cancel()
	select {
	case r := <-c.lines:
		if r.err != nil {
			c.err = fmt.Errorf("read: %w", r.err)
			return r.line, c.err
		}
		return r.line, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("read: %w", ctx.Err())
	}
}

// Call sends a request and returns the whole line of its response (a result or an
// error). id is a raw JSON token, e.g. `1` or `"a"`; params is raw JSON or "" for
// none. It is Request, Send and Await; ctx bounds the whole wait, as in ReadLine.
func (c *Client) Call(ctx context.Context, id, method, params string) (json.RawMessage, error) {
	msg, err := Request(id, method, params)
	if err != nil {
		return nil, err
	}
	if err := c.Send(msg); err != nil {
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	return c.Await(ctx, id, method)
}

// Request builds a request line (without its newline); id and params are as
// in Call.
func Request(id, method, params string) (string, error) {
	id = string(bytes.TrimSpace([]byte(id)))
	if !json.Valid([]byte(id)) {
		return "", fmt.Errorf("call %s: id %q is not a JSON value", method, id)
	}
	if params != "" && !json.Valid([]byte(params)) {
		return "", fmt.Errorf("call %s: params are not JSON: %q", method, params)
	}
	name, _ := json.Marshal(method) // a string always marshals
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":` + string(name)
	if params != "" {
		msg += `,"params":` + params
	}
	return msg + "}", nil
}

// Await returns the whole line of the response to the request id of method,
// skipping notifications and responses to other ids. A line that is not JSON
// fails with ErrNotJSON (unless OnNoise takes it) and a server request with
// ErrServerRequest, both returning the line. ctx bounds the wait, as in ReadLine.
func (c *Client) Await(ctx context.Context, id, method string) (json.RawMessage, error) {
	id = string(bytes.TrimSpace([]byte(id)))
	ctx, cancel := withReadDeadline(ctx)
	defer cancel()
	for {
		line, err := c.ReadLine(ctx)
		if err != nil {
			return line, fmt.Errorf("call %s: %w", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			if c.OnNoise != nil {
				c.OnNoise(line)
				continue
			}
			return line, fmt.Errorf("call %s: %w: %.80q", method, ErrNotJSON, line)
		}
		switch {
		case m.Method != "" && m.ID == nil:
			// a notification
		case m.Method != "":
			return line, fmt.Errorf("call %s: %w: %s", method, ErrServerRequest, m.Method)
		case sameID(m.ID, id):
			return line, nil
		}
	}
}

// Handshake opens a session and returns the result line. Era "legacy" sends
// initialize (id 1, protocol 2025-11-25) and then notifications/initialized;
// "modern" sends server/discover (id 1, protocol 2026-07-28 in _meta). An error
// answer fails with ErrRPC, returning the line.
func (c *Client) Handshake(ctx context.Context, era string) (json.RawMessage, error) {
	var method, params string
	switch era {
	case "legacy":
		method = "initialize"
		params = `{"protocolVersion":"` + latestLegacyVersion + `","capabilities":{},"clientInfo":{"name":"mcpshim-testclient","version":"1.0.0"}}`
	case "modern":
		method = "server/discover"
		params = `{"_meta":{"` + metaProtocolVersion + `":"` + modernVersion + `"}}`
	default:
		return nil, fmt.Errorf("handshake: unknown era %q, want legacy or modern", era)
	}
	line, err := c.Call(ctx, "1", method, params)
	if err != nil {
		return line, fmt.Errorf("handshake: %w", err)
	}
	var m struct {
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err == nil && m.Error != nil {
		return line, fmt.Errorf("handshake: %s: %w %d: %s", method, ErrRPC, m.Error.Code, m.Error.Message)
	}
	if era == "legacy" {
		if err := c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return line, fmt.Errorf("handshake: %w", err)
		}
	}
	return line, nil
}

func withReadDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, defaultReadTimeout)
}

// sameID compares ids as values, as the SDKs do: a server that re-spells
// the id (1.0 for 1, "\u00e9" for "é") still answers the call.
func sameID(got json.RawMessage, want string) bool {
	a, ok1 := mcp.ParseID(got)
	b, ok2 := mcp.ParseID([]byte(want))
	return ok1 && ok2 && a == b
}
