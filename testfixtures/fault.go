package testfixtures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// faultServer is the fault fixture: an MCP server of sp.Era that breaks
// where and as sp says, and otherwise serves one tool, echo. Messages are
// counted as read, from 1, notifications included.
type faultServer struct {
	sp       FaultSpec
	in       *bufio.Reader
	out      io.Writer
	errw     io.Writer
	n        int    // messages read
	fired    bool   // the fault has fired
	errNext  int    // answer the next request with this JSON-RPC error code
	ignore   string // never answer this method
	badVer   bool   // answer the handshake with FaultVersionAnswered
	askFirst bool   // a tools/call first asks the client for sampling
}

// serveFault runs the fault fixture of spec on st, returning its exit status.
func serveFault(spec string, st stdio) int {
	sp, err := ParseFaultSpec(spec)
	if err != nil {
		fmt.Fprintln(st.err, err)
		return 2
	}
	s := &faultServer{sp: sp, in: bufio.NewReaderSize(st.in, 64<<10), out: st.out, errw: st.err}
	if started := os.Getenv("FAULT_STARTED"); started != "" {
		// A client that leaves at once waits for this: the fixture runs.
		os.WriteFile(started, nil, 0o600)
	}
	if sp.Say == SayChatter {
		for _, l := range ChatterLines {
			fmt.Fprintln(s.errw, l)
		}
	}
	if sp.At.Point == "start" {
		if code, stop := s.fire(); stop {
			return code
		}
	}
	for {
		line, err := s.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.n++
			if code, stop := s.handle(line); stop {
				return code
			}
		}
		if err != nil {
			return 0 // stdin ended: the client left
		}
	}
}

// fire injects the fault once; stop says the server ends with code.
func (s *faultServer) fire() (code int, stop bool) {
	if s.fired {
		return 0, false
	}
	s.fired = true
	switch s.sp.Say {
	case SayCause:
		fmt.Fprintln(s.errw, FaultCause)
	case SayBuried:
		fmt.Fprintln(s.errw, FaultCause)
		line := "debug: " + strings.Repeat("cache warm ", 12) + "\n"
		for n := 0; n < FaultBurial; n += len(line) {
			io.WriteString(s.errw, line)
		}
	}
	switch s.sp.Do {
	case FaultExit:
		n, _ := strconv.Atoi(s.sp.Arg)
		return n, true
	case FaultKill:
		return killSelf(s.sp.Arg, s.errw), true
	case FaultOutside:
		if mark := os.Getenv("FAULT_MARK"); mark != "" {
			os.WriteFile(mark, []byte(strconv.Itoa(os.Getpid())), 0o600)
		}
		return s.drain(), true
	case FaultCloseOut:
		if c, ok := s.out.(io.Closer); ok {
			c.Close()
		}
		return s.drain(), true
	case FaultHang:
		return s.drain(), true
	case FaultSlow:
		d, _ := time.ParseDuration(s.sp.Arg)
		time.Sleep(d)
	case FaultVersion:
		s.badVer = true
	case FaultError:
		s.errNext, _ = strconv.Atoi(s.sp.Arg)
	case FaultIgnore:
		s.ignore = s.sp.Arg
	case FaultNoise:
		io.WriteString(s.out, "fault: this line is not JSON-RPC\n")
	case FaultRequest:
		s.askFirst = true
	}
	return 0, false
}

// drain reads stdin to its end, answering nothing: a server alive but of
// no use.
func (s *faultServer) drain() int {
	io.Copy(io.Discard, s.in)
	return 0
}

// handle serves one message, firing the fault where the spec says.
func (s *faultServer) handle(line []byte) (int, bool) {
	if s.sp.At.Point == "read" && s.sp.At.N == s.n {
		if code, stop := s.fire(); stop {
			return code, true
		}
	}
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return 0, false // a response, to sampling or to nothing
	}
	answer := s.answer(m)
	if s.sp.At.Point == "midline" && s.sp.At.N == s.n {
		torn := answer
		if torn == nil {
			torn = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}` + "\n")
		}
		s.out.Write(torn[:len(torn)/2])
		if code, stop := s.fire(); stop {
			return code, true
		}
		answer = nil // the rest of a torn line is never written
	}
	if answer != nil {
		if _, err := s.out.Write(answer); err != nil {
			return 0, true // the reader left: nothing to report
		}
	}
	switch {
	case s.sp.At.Point == "handshake" && (m.Method == "notifications/initialized" || m.Method == "server/discover" && s.era("modern") && answer != nil && !bytes.Contains(answer, []byte(`"error"`))),
		s.sp.At.Point == "list" && m.Method == "tools/list":
		return s.fire()
	}
	return 0, false
}

func (s *faultServer) era(e string) bool { return s.sp.Era == e || s.sp.Era == "both" }

// answer is the line that answers m, nil for a notification or a request
// left unanswered.
func (s *faultServer) answer(m message) []byte {
	if m.ID == nil || m.Method == s.ignore {
		return nil
	}
	if s.errNext != 0 {
		code := s.errNext
		s.errNext = 0
		return faultLine(response{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: code, Message: FaultErrorMessage}})
	}
	result := func(v any) []byte { return faultLine(response{JSONRPC: "2.0", ID: m.ID, Result: v}) }
	notFound := faultLine(response{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: codeMethodNotFound, Message: "Method not found"}})
	info := serverInfo{Name: "fault", Version: "1.0.0"}
	switch m.Method {
	case "initialize":
		if !s.era("legacy") {
			return notFound
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		v := negotiate(p.ProtocolVersion)
		if s.badVer {
			v = FaultVersionAnswered
		}
		return result(map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": info})
	case "server/discover":
		if !s.era("modern") {
			return notFound
		}
		supported := []string{modernVersion}
		if s.badVer {
			supported = []string{FaultVersionAnswered}
		}
		return result(map[string]any{"supportedVersions": supported, "capabilities": map[string]any{"tools": map[string]any{}},
			"_meta": map[string]serverInfo{metaServerInfo: info}, "resultType": "complete"})
	case "ping":
		return result(struct{}{})
	case "tools/list":
		return result(map[string]any{"tools": []tool{echoTool}})
	case "tools/call":
		if s.askFirst {
			s.askFirst = false
			io.WriteString(s.out, `{"jsonrpc":"2.0","id":"fault-s-1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`+"\n")
			if _, err := s.await(`"fault-s-1"`); err != nil {
				return nil
			}
		}
		return result(map[string]any{"content": []map[string]string{{"type": "text", "text": "echo"}}})
	}
	return notFound
}

// await reads until the client answers the server request id.
func (s *faultServer) await(id string) (message, error) {
	for {
		line, err := s.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.n++
			var m message
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == id {
				return m, nil
			}
		}
		if err != nil {
			return message{}, err
		}
	}
}

func faultLine(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // the fixture's own values always encode
	return buf.Bytes()
}
