package testfixtures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// Protocol versions and _meta keys the fixtures speak.
const (
	modernVersion       = "2026-07-28"
	latestLegacyVersion = "2025-11-25"
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// legacyVersions are the initialize-era revisions a fixture agrees to echo back.
var legacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", latestLegacyVersion}

// JSON-RPC error codes the fixtures answer with.
const (
	codeParseError     = -32700
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// negotiate picks the initialize protocolVersion: the client's if it is a known
// legacy revision, otherwise the latest legacy one.
func negotiate(requested string) string {
	if slices.Contains(legacyVersions, requested) {
		return requested
	}
	return latestLegacyVersion
}

// exitCode ends a fixture with a status it chose (a crash, a handshake exit).
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// message is any inbound JSON-RPC line. ID stays raw so it is echoed byte for byte.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// server is a hand-written MCP server over line-delimited JSON-RPC. Its fields
// choose where it breaks; the zero values of the knobs mean "behave".
type server struct {
	name      string   // serverInfo name
	legacy    bool     // answers initialize
	modern    bool     // answers server/discover
	supported []string // supportedVersions in the server/discover result
	tools     []tool
	pageSize  int // tools per tools/list page; 0 means one page

	initDelay           time.Duration     // once, before answering the first initialize or server/discover
	rejectInit          string            // non-empty: initialize fails with -32602 and this message
	wedgeOnInit         string            // non-empty: on the handshake, log this on stderr and never answer again
	crashOnCall         int               // the Nth tools/call dies mid-response
	crashAfterHandshake bool              // exit 3 once the handshake completes
	listChangedAfter    int               // send notifications/tools/list_changed after the Nth call
	banner              string            // written to stdout before anything is read
	stdoutLog           string            // written to stdout before every response
	chatty              bool              // a stderr line, with a token, per request
	ignoreEOF           bool              // keep running after stdin closes
	peer                string            // whose JSON library the answers look like (peerGo, peerTS, peerPython)
	validateMeta        bool              // reject 2026-07-28 requests missing required _meta, as go-sdk does
	emptyCursor         bool              // page tools/list with "" as the first cursor (a valid cursor in 2026-07-28)
	endListen           bool              // end each subscriptions/listen at once with notifications/cancelled
	noListChanged       bool              // initialize declares tools without listChanged
	refuseDiscover      bool              // server/discover answers -32022 UnsupportedProtocolVersion
	tasks               map[string]string // task id -> the text its tasks/result answers with

	in      *bufio.Reader
	out     io.Writer
	errw    io.Writer
	calls   int  // tools/call requests seen
	samples int  // sampling requests sent
	wedged  bool // wedgeOnInit has fired
}

// slowStart waits initDelay once per process: a slow server is slow to
// start, not slow at every handshake attempt (a dual-era client tries two).
func (s *server) slowStart() {
	time.Sleep(s.initDelay)
	s.initDelay = 0
}

// newServer returns a healthy two-era server with no tools.
func newServer(name string, st stdio) *server {
	return &server{
		name:      name,
		legacy:    true,
		modern:    true,
		supported: []string{modernVersion, latestLegacyVersion},
		in:        bufio.NewReaderSize(st.in, 64<<10),
		out:       st.out,
		errw:      st.err,
	}
}

// run serves until stdin ends or the fixture chooses to exit, returning the exit status.
func (s *server) run() int {
	if s.banner != "" {
		if _, err := io.WriteString(s.out, s.banner+"\n"); err != nil {
			return s.fail(err)
		}
	}
	for {
		line, err := s.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if herr := s.handle(line); herr != nil {
				err = herr
			}
		}
		if err == nil {
			continue
		}
		if code, ok := errors.AsType[exitCode](err); ok {
			return int(code)
		}
		if errors.Is(err, io.EOF) {
			if s.ignoreEOF {
				fmt.Fprintln(s.errw, "stdin closed; staying up until SIGKILL")
				for {
					time.Sleep(time.Hour)
				}
			}
			return 0
		}
		return s.fail(err)
	}
}

func (s *server) fail(err error) int {
	fmt.Fprintf(s.errw, "fixture %s: %v\n", s.name, err)
	return 1
}

// handle answers one inbound line.
func (s *server) handle(line []byte) error {
	if s.wedged {
		return nil
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return s.replyError(json.RawMessage("null"), codeParseError, "Parse error")
	}
	if m.Method == "" {
		return nil // a response to a request we never sent
	}
	if m.ID == nil {
		if m.Method == "notifications/initialized" && s.legacy && s.crashAfterHandshake {
			fmt.Fprintln(s.errw, "fatal: exiting right after the handshake")
			return exitCode(3)
		}
		return nil
	}
	if s.chatty {
		fmt.Fprintf(s.errw, "debug: %s upstream headers: Authorization: Bearer %s\n", m.Method, fakeToken)
	}
	if msg := missingMeta(m.Params); s.validateMeta && msg != "" {
		return s.replyError(m.ID, codeInvalidParams, msg)
	}
	switch m.Method {
	case "initialize":
		return s.initialize(m)
	case "server/discover":
		return s.discover(m)
	case "ping":
		return s.reply(m.ID, struct{}{})
	case "tools/list":
		return s.listTools(m)
	case "tools/call":
		return s.callTool(m)
	case "subscriptions/listen":
		return s.listen(m)
	case "tasks/result":
		return s.taskResult(m)
	}
	return s.replyError(m.ID, codeMethodNotFound, "Method not found")
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (s *server) initialize(m message) error {
	if !s.legacy {
		return s.replyError(m.ID, codeMethodNotFound, "Method not found")
	}
	if s.wedge() {
		return nil
	}
	s.slowStart()
	if s.rejectInit != "" {
		return s.replyError(m.ID, codeInvalidParams, s.rejectInit)
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(m.Params, &p) // absent or odd params negotiate the latest version
	return s.reply(m.ID, struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    map[string]any `json:"capabilities"`
		ServerInfo      serverInfo     `json:"serverInfo"`
	}{
		ProtocolVersion: negotiate(p.ProtocolVersion),
		Capabilities:    map[string]any{"tools": map[string]any{"listChanged": !s.noListChanged}},
		ServerInfo:      serverInfo{Name: s.name, Version: "1.0.0"},
	})
}

func (s *server) discover(m message) error {
	if !s.modern {
		return s.replyError(m.ID, codeMethodNotFound, "Method not found")
	}
	if s.wedge() {
		return nil
	}
	s.slowStart()
	if s.refuseDiscover {
		return s.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32022,
			"message": "Unsupported protocol version", "data": map[string]any{"supported": s.supported, "requested": modernVersion}}})
	}
	err := s.reply(m.ID, struct {
		SupportedVersions []string              `json:"supportedVersions"`
		Capabilities      map[string]any        `json:"capabilities"`
		Meta              map[string]serverInfo `json:"_meta"`
		ResultType        string                `json:"resultType"`
	}{
		SupportedVersions: s.supported,
		Capabilities:      map[string]any{"tools": map[string]any{}},
		Meta:              map[string]serverInfo{metaServerInfo: {Name: s.name, Version: "1.0.0"}},
		ResultType:        "complete",
	})
	if err == nil && s.crashAfterHandshake {
		fmt.Fprintln(s.errw, "fatal: exiting right after the handshake")
		return exitCode(3)
	}
	return err
}

// wedge reports whether the handshake must go unanswered, logging why once.
func (s *server) wedge() bool {
	if s.wedgeOnInit == "" {
		return false
	}
	s.wedged = true
	fmt.Fprintln(s.errw, s.wedgeOnInit)
	return true
}

func (s *server) listTools(m message) error {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p) // no params means the first page
	if s.emptyCursor {
		return s.listEmptyCursor(m, p.Cursor)
	}
	start := 0
	if p.Cursor != nil && *p.Cursor != "" {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 || n > len(s.tools) {
			return s.replyError(m.ID, codeInvalidParams, "invalid cursor")
		}
		start = n
	}
	end := len(s.tools)
	if s.pageSize > 0 && start+s.pageSize < end {
		end = start + s.pageSize
	}
	page := struct {
		Tools      []tool `json:"tools"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{Tools: append([]tool{}, s.tools[start:end]...)} // never null, even when empty
	if end < len(s.tools) {
		page.NextCursor = strconv.Itoa(end)
	}
	return s.reply(m.ID, page)
}

func (s *server) callTool(m message) error {
	var p struct {
		Name         string          `json:"name"`
		Arguments    map[string]any  `json:"arguments"`
		Task         json.RawMessage `json:"task"`
		RequestState *string         `json:"requestState"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return s.replyError(m.ID, codeInvalidParams, "invalid params")
	}
	s.calls++
	if p.Task != nil {
		// A task-augmented call: the work goes on, its outcome comes with tasks/result.
		id := "task-" + strconv.Itoa(s.calls)
		if s.tasks == nil {
			s.tasks = map[string]string{}
		}
		s.tasks[id] = p.Name + " done"
		return s.reply(m.ID, map[string]any{"task": map[string]any{"taskId": id, "status": "working"}})
	}
	if p.Name == "confirm" && p.RequestState == nil {
		// MRTR: ask for input; the client retries with inputResponses and requestState.
		return s.reply(m.ID, map[string]any{"resultType": "input_required", "requestState": "round-1",
			"inputRequests": map[string]any{"ok": map[string]any{"method": "elicitation/create",
				"params": map[string]any{"mode": "form", "message": "Proceed?", "requestedSchema": map[string]any{"type": "object"}}}}})
	}
	if s.calls == s.crashOnCall {
		// Half a response and no newline: the client sees a torn line, then EOF.
		fmt.Fprintf(s.out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[`, m.ID)
		fmt.Fprintf(s.errw, "fatal: crashed while answering tools/call %d\n", s.calls)
		return exitCode(1)
	}
	i := slices.IndexFunc(s.tools, func(t tool) bool { return t.Name == p.Name })
	if i < 0 {
		return s.replyError(m.ID, codeInvalidParams, "unknown tool: "+p.Name)
	}
	if err := s.tools[i].call(s, m.ID, p.Arguments); err != nil {
		return err
	}
	if s.calls == s.listChangedAfter {
		return s.send(struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
		}{"2.0", "notifications/tools/list_changed"})
	}
	return nil
}

// beginResponse writes what a broken server prints before each response.
func (s *server) beginResponse() error {
	if s.stdoutLog == "" {
		return nil
	}
	_, err := io.WriteString(s.out, s.stdoutLog+"\n")
	return err
}

func (s *server) reply(id json.RawMessage, result any) error {
	if err := s.beginResponse(); err != nil {
		return err
	}
	if s.peer == peerTS {
		return s.send(tsResponse{JSONRPC: "2.0", ID: respell(id, s.peer), Result: result})
	}
	return s.send(response{JSONRPC: "2.0", ID: respell(id, s.peer), Result: result})
}

func (s *server) replyError(id json.RawMessage, code int, msg string) error {
	if err := s.beginResponse(); err != nil {
		return err
	}
	if s.peer == peerTS {
		return s.send(tsResponse{JSONRPC: "2.0", ID: respell(id, s.peer), Error: &rpcError{Code: code, Message: msg}})
	}
	return s.send(response{JSONRPC: "2.0", ID: respell(id, s.peer), Error: &rpcError{Code: code, Message: msg}})
}

// taskResult answers tasks/result for a task callTool created.
func (s *server) taskResult(m message) error {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	text, ok := s.tasks[p.TaskID]
	if !ok {
		return s.replyError(m.ID, codeInvalidParams, "unknown task: "+p.TaskID)
	}
	delete(s.tasks, p.TaskID)
	return s.replyText(m.ID, text, false)
}

// listen opens a 2026-07-28 subscription stream: acknowledged, and kept
// open (never answered) unless endListen ends it with notifications/cancelled.
func (s *server) listen(m message) error {
	meta := map[string]json.RawMessage{metaSubscriptionID: m.ID}
	var p struct {
		Notifications json.RawMessage `json:"notifications"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if err := s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": meta, "notifications": p.Notifications}}); err != nil {
		return err
	}
	if !s.endListen {
		return nil
	}
	return s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": m.ID, "reason": "subscription ended by the server"}})
}

// listEmptyCursor serves the tools in two pages whose cursor is "": the
// first page (no cursor member) says nextCursor "", the page at "" ends.
func (s *server) listEmptyCursor(m message, cursor *string) error {
	half := len(s.tools) / 2
	if cursor == nil {
		return s.reply(m.ID, struct {
			Tools      []tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}{append([]tool{}, s.tools[:half]...), ""})
	}
	if *cursor != "" {
		return s.replyError(m.ID, codeInvalidParams, "invalid cursor")
	}
	return s.reply(m.ID, struct {
		Tools []tool `json:"tools"`
	}{append([]tool{}, s.tools[half:]...)})
}

// send writes v as one line in a single Write, so a message is never interleaved.
func (s *server) send(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // ids and texts go out as the client sent them
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if _, err := s.out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	return nil
}

// await reads until the client answers the server request id, skipping anything else.
func (s *server) await(id string) (message, error) {
	for {
		line, err := s.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m message
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == id {
				return m, nil
			}
			fmt.Fprintf(s.errw, "ignoring %q while waiting for the answer to %s\n", m.Method, id)
		}
		if err != nil {
			return message{}, err
		}
	}
}
