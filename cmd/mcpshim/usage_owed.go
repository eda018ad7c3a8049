package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// usageWait bounds how long a shim that cannot start waits for the client's
// first request, to answer it with why.
const usageWait = 10 * time.Second

// tellClient answers the client's first request with msg, the usage error
// the shim cannot start with, as the shim's own JSON-RPC error: a client
// shows its message, where a shim that only exits shows "Connection closed"
// (the error is on stderr too, in the client's log). Not on a terminal: a
// person reads stderr. It returns at the first request answered, at the end
// of stdin, or after usageWait.
func tellClient(c *cli, msg string) {
	if f, ok := c.stdin.(*os.File); c.stdin == nil || ok && isatty.IsTerminal(f.Fd()) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReaderSize(c.stdin, 64<<10)
		for long := false; ; {
			line, err := r.ReadSlice('\n')
			if !long {
				if m := mcp.Peek(bytes.TrimRight(line, "\r\n")); m.Kind == mcp.Request && err != bufio.ErrBufferFull {
					c.stdout.Write(append(mcp.ErrorLine(m.RawID, mcp.CodeServerGone, msg, nil), '\n'))
					return
				}
			}
			long = errors.Is(err, bufio.ErrBufferFull) // the rest of a long line is no request
			if err != nil && !long {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(usageWait):
	}
}
