package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// client is the tour's scripted MCP client, the fixtures' client with a
// note of each step: what the client saw, and whether it got a result.
type client struct {
	c        *testfixtures.Client
	patience time.Duration
	modern   bool // the session speaks 2026-07-28: _meta on every request
	lastID   int
	notes    []string
}

// newClient talks to a shim over its stdin (w) and stdout (r). A line that
// is not JSON is noted and skipped, as Claude Code skips a banner; a
// strict client would choke on it.
func newClient(w io.Writer, r io.Reader, patience time.Duration) *client {
	dc := &client{c: testfixtures.NewClient(w, r), patience: patience}
	dc.c.OnNoise = func(line []byte) { dc.note("read a line that is not JSON: %s", clip(string(line), 60)) }
	return dc
}

func (dc *client) note(format string, args ...any) {
	dc.notes = append(dc.notes, fmt.Sprintf(format, args...))
}

// call sends a request and waits for its answer.
func (dc *client) call(ctx context.Context, label, method, params string) (json.RawMessage, bool) {
	dc.lastID++
	id := strconv.Itoa(dc.lastID)
	msg, err := testfixtures.Request(id, method, params)
	if err == nil {
		err = dc.c.Send(msg)
	}
	if err != nil {
		dc.note("%s → could not send: %v", label, err)
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, dc.patience)
	defer cancel()
	line, err := dc.c.Await(ctx, id, method)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		dc.note("%s → no answer within %v", label, dc.patience)
		return nil, false
	case errors.Is(err, testfixtures.ErrServerRequest):
		dc.note("%s → no answer: the server sent a request first (%s)", label, clip(string(line), 60))
		return nil, false
	case err != nil:
		dc.note("%s → no answer: the shim closed the stream", label)
		return nil, false
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(line, &m) // Await returns only JSON
	if m.Error != nil {
		dc.note("%s → error %d: %s", label, m.Error.Code, m.Error.Message)
		return nil, false
	}
	return m.Result, true
}

// meta is the _meta member every 2026-07-28 request carries: the required
// protocolVersion and clientCapabilities, and clientInfo.
func (dc *client) meta() string {
	return `"_meta":{"` + mcp.MetaProtocolVersion + `":"` + mcp.ModernVersion + `","` + mcp.MetaClientCapabilities + `":{},"` +
		mcp.MetaClientInfo + `":{"name":"mcpshim-demo","version":"1"}}`
}

func (dc *client) initialize(ctx context.Context) bool {
	res, ok := dc.call(ctx, mcp.MethodInitialize, mcp.MethodInitialize,
		`{"protocolVersion":"`+mcp.LegacyVersion+`","capabilities":{},"clientInfo":{"name":"mcpshim-demo","version":"1"}}`)
	if !ok {
		return false
	}
	r, _ := mcp.ParseInitializeResult(res) // a result the client cannot read is noted as empty
	info := r.Server()
	dc.note("initialize → %s %s, protocol %s", info.Name, info.Version, r.ProtocolVersion)
	return dc.c.Send(string(mcp.NotificationLine(mcp.NotificationInitialized))) == nil
}

func (dc *client) discover(ctx context.Context) bool {
	dc.modern = true
	res, ok := dc.call(ctx, mcp.MethodDiscover, mcp.MethodDiscover, "{"+dc.meta()+"}")
	if !ok {
		return false
	}
	r, _ := mcp.ParseDiscoverResult(res)
	info := r.Server()
	dc.note("server/discover → %s %s, supports %s", info.Name, info.Version, strings.Join(r.SupportedVersions, ", "))
	return true
}

func (dc *client) listTools(ctx context.Context) bool {
	params := ""
	if dc.modern {
		params = "{" + dc.meta() + "}"
	}
	res, ok := dc.call(ctx, mcp.MethodListTools, mcp.MethodListTools, params)
	if !ok {
		return false
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(res, &r)
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	list := verdict.Plural(len(names), "tool")
	if len(names) > 0 {
		list += ": " + strings.Join(names, ", ")
	}
	dc.note("tools/list → %s", list)
	return true
}

func (dc *client) callTool(ctx context.Context, tool, args string) bool {
	params := `{"name":"` + tool + `","arguments":` + args
	if dc.modern {
		params += "," + dc.meta()
	}
	label := "tools/call " + tool + " " + args
	res, ok := dc.call(ctx, label, mcp.MethodCallTool, params+"}")
	if !ok {
		return false
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(res, &r)
	var text []string
	for _, c := range r.Content {
		text = append(text, c.Text)
	}
	answer := strconv.Quote(strings.Join(text, " "))
	if r.IsError {
		answer = "isError: " + answer
	}
	dc.note("%s → %s", label, answer)
	return true
}

// drain reads the shim's stdout to its end; it reports false when the end
// did not come within d.
func (dc *client) drain(ctx context.Context, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		_, err := dc.c.ReadLine(ctx)
		if err == nil {
			continue
		}
		return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	}
}
