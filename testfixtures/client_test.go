package testfixtures

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// clientPipes returns a Client whose peer is played by the test through real pipes:
// the test writes server lines to serverOut and reads what the client sent from sent.
func clientPipes(t *testing.T) (c *Client, serverOut *os.File, sent *Client) {
	t.Helper()
	toClientR, toClientW := pipe(t)
	toServerR, toServerW := pipe(t)
	t.Cleanup(func() {
		// Write ends first: the readers get EOF. On Windows closing a pipe
		// blocks while a read on it waits (os.Pipe's pipes are synchronous).
		for _, f := range []*os.File{toClientW, toServerW, toClientR, toServerR} {
			f.Close()
		}
	})
	// A second Client reading the other pipe is the simplest line reader for the test side.
	return NewClient(toServerW, toClientR), toClientW, NewClient(io.Discard, toServerR)
}

func TestClientCall(t *testing.T) {
	tests := []struct {
		name     string
		server   string // lines the server writes before the client gives up
		id       string
		wantLine string
		wantErr  error
	}{
		{"skips notifications and other ids",
			`{"jsonrpc":"2.0","method":"notifications/progress"}` + "\n" + `{"jsonrpc":"2.0","id":"7","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}` + "\n",
			"7", `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`, nil},
		{"string id", `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}` + "\n",
			`"a"`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}`, nil},
		{"banner", "Starting Acme MCP server\n", "1", "Starting Acme MCP server", ErrNotJSON},
		{"server request", `{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage"}` + "\n",
			"1", `{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage"}`, ErrServerRequest},
		{"torn line", `{"jsonrpc":"2.0","id":1,"res`, "1", `{"jsonrpc":"2.0","id":1,"res`, io.ErrUnexpectedEOF},
		{"silence", "", "1", "", context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, serverOut, sent := clientPipes(t)
			if _, err := serverOut.WriteString(tt.server); err != nil {
				t.Fatal(err)
			}
			if tt.wantErr == io.ErrUnexpectedEOF {
				serverOut.Close()
			}
			line, err := c.Call(deadline(t, 300*time.Millisecond), tt.id, "ping", `{}`)
			if string(line) != tt.wantLine || !errors.Is(err, tt.wantErr) {
				t.Errorf("Call(%s) after %q: got %q, %v; want %q, %v", tt.id, tt.server, line, err, tt.wantLine, tt.wantErr)
			}
			req, err := sent.ReadLine(deadline(t, time.Second))
			if want := `{"jsonrpc":"2.0","id":` + tt.id + `,"method":"ping","params":{}}`; string(req) != want || err != nil {
				t.Errorf("Call(%s) sent %q, %v; want %q", tt.id, req, err, want)
			}
		})
	}
}

func TestClientRejectsBadJSON(t *testing.T) {
	c, _, _ := clientPipes(t)
	for _, args := range [][2]string{{"1 2", "{}"}, {"", "{}"}, {"1", "{"}} {
		if _, err := c.Call(deadline(t, time.Second), args[0], "ping", args[1]); err == nil {
			t.Errorf("Call(id %q, params %q): got nil error, want one", args[0], args[1])
		}
	}
}

func TestClientReadAfterTimeout(t *testing.T) {
	c, serverOut, _ := clientPipes(t)
	if _, err := c.ReadLine(deadline(t, 50*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadLine on silence: got %v, want deadline exceeded", err)
	}
	if _, err := serverOut.WriteString("late\nlast"); err != nil {
		t.Fatal(err)
	}
	serverOut.Close()
	for _, want := range []struct {
		line string
		err  error
	}{{"late", nil}, {"last", io.ErrUnexpectedEOF}, {"", io.ErrUnexpectedEOF}} {
		line, err := c.ReadLine(deadline(t, time.Second))
		if string(line) != want.line || !errors.Is(err, want.err) {
			t.Errorf("ReadLine: got %q, %v; want %q, %v", line, err, want.line, want.err)
		}
	}
}

func TestClientHandshakeUnknownEra(t *testing.T) {
	c, _, _ := clientPipes(t)
	if _, err := c.Handshake(deadline(t, time.Second), "future"); err == nil || !strings.Contains(err.Error(), `"future"`) {
		t.Errorf(`Handshake("future"): got %v, want an unknown era error`, err)
	}
}
