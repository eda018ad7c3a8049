package testfixtures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// tool is one advertised tool; call answers a tools/call for it (it writes the response).
type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	call        func(s *server, id json.RawMessage, args map[string]any) error
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content []textContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
}

func (s *server) replyText(id json.RawMessage, text string, isError bool) error {
	return s.reply(id, callResult{Content: []textContent{{Type: "text", Text: text}}, IsError: isError})
}

// namedTools builds the healthy tool set from a comma-separated list: echo and add
// do their jobs, any other name answers "NAME ok".
func namedTools(list string) []tool {
	var tools []tool
	for name := range strings.SplitSeq(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "echo":
			tools = append(tools, echoTool)
		case "add":
			tools = append(tools, addTool)
		default:
			tools = append(tools, okTool(name))
		}
	}
	return tools
}

var echoTool = tool{
	Name:        "echo",
	Description: "Return the text argument unchanged",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	call: func(s *server, id json.RawMessage, args map[string]any) error {
		text, ok := args["text"].(string)
		if !ok {
			return s.replyText(id, "text must be a string", true)
		}
		return s.replyText(id, text, false)
	},
}

var addTool = tool{
	Name:        "add",
	Description: "Add two numbers",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
	call: func(s *server, id json.RawMessage, args map[string]any) error {
		a, aok := args["a"].(float64)
		b, bok := args["b"].(float64)
		if !aok || !bok {
			return s.replyText(id, "a and b must be numbers", true)
		}
		return s.replyText(id, strconv.FormatFloat(a+b, 'g', -1, 64), false)
	},
}

func okTool(name string) tool {
	return tool{
		Name:        name,
		Description: "Answer " + name + " ok",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		call: func(s *server, id json.RawMessage, _ map[string]any) error {
			return s.replyText(id, name+" ok", false)
		},
	}
}

// invalidSchemaTools advertise a misspelt schema type and a missing schema.
var invalidSchemaTools = []tool{
	{Name: "bad_schema", Description: "Its inputSchema type is misspelt", InputSchema: json.RawMessage(`{"type":"strng"}`), call: okTool("bad_schema").call},
	{Name: "no_schema", Description: "It has no inputSchema at all", call: okTool("no_schema").call},
}

var isErrorTool = tool{
	Name:        "fetch",
	Description: "Fetch a URL from the upstream API",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`),
	call: func(s *server, id json.RawMessage, _ map[string]any) error {
		return s.replyText(id, "upstream answered 401: invalid api key", true)
	},
}

var rpcErrorTool = tool{
	Name:        "lookup",
	Description: "Advertised, but every call is refused",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
	call: func(s *server, id json.RawMessage, _ map[string]any) error {
		return s.replyError(id, codeInvalidParams, "unknown tool")
	},
}

// hugeTool answers with one response line of exactly size bytes (newline included,
// unless size is too small to hold the envelope), streamed so it is never held in memory.
func hugeTool(size int64) tool {
	return tool{
		Name:        "dump",
		Description: "Return one very long text",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		call: func(s *server, id json.RawMessage, _ map[string]any) error {
			if err := s.beginResponse(); err != nil {
				return err
			}
			head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
			tail := "\"}]}}\n"
			if s.peer == peerTS {
				// The TypeScript SDK's order: the id after the whole result.
				head = `{"result":{"content":[{"type":"text","text":"`
				tail = `"}]},"jsonrpc":"2.0","id":` + string(respell(id, s.peer)) + "}\n"
			}
			n := max(size-int64(len(head)+len(tail)), 0)
			if _, err := io.WriteString(s.out, head); err != nil {
				return fmt.Errorf("write stdout: %w", err)
			}
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for n > 0 {
				k := min(n, int64(len(chunk)))
				if _, err := s.out.Write(chunk[:k]); err != nil {
					return fmt.Errorf("write stdout: %w", err)
				}
				n -= k
			}
			if _, err := io.WriteString(s.out, tail); err != nil {
				return fmt.Errorf("write stdout: %w", err)
			}
			return nil
		},
	}
}

// reportTools is a report server's surface: no token, no tools; a read scope hides
// the fetch tool. The handshake succeeds either way.
func reportTools(token, scope string) []tool {
	list := tool{
		Name:        "list_report_dates",
		Description: "List the dates that have a daily report",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		call: func(s *server, id json.RawMessage, _ map[string]any) error {
			return s.replyText(id, "2026-07-27\n2026-07-28", false)
		},
	}
	fetch := tool{
		Name:        "fetch_daily_report",
		Description: "Fetch the daily report for one date",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`),
		call: func(s *server, id json.RawMessage, args map[string]any) error {
			date, _ := args["date"].(string)
			return s.replyText(id, "report "+date+": 42 orders", false)
		},
	}
	switch {
	case token == "":
		return nil
	case scope == "read":
		return []tool{list}
	}
	return []tool{fetch, list}
}

// samplingTool asks the client to sample before it answers, and answers with what it got.
var samplingTool = tool{
	Name:        "summarise",
	Description: "Summarise via the client's model (sends sampling/createMessage first)",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	call: func(s *server, id json.RawMessage, args map[string]any) error {
		s.samples++
		sid := strconv.Quote("s-" + strconv.Itoa(s.samples))
		text, _ := args["text"].(string)
		err := s.send(map[string]any{
			"jsonrpc": "2.0",
			"id":      json.RawMessage(sid),
			"method":  "sampling/createMessage",
			"params": map[string]any{
				"messages":  []any{map[string]any{"role": "user", "content": textContent{Type: "text", Text: "Summarise: " + text}}},
				"maxTokens": 100,
			},
		})
		if err != nil {
			return err
		}
		answer, err := s.await(sid)
		if err != nil {
			return err
		}
		if answer.Error != nil {
			return s.replyText(id, "sampling failed: "+answer.Error.Message, true)
		}
		var r struct {
			Content textContent `json:"content"`
		}
		if err := json.Unmarshal(answer.Result, &r); err != nil {
			return s.replyText(id, "sampling answer unreadable: "+err.Error(), true)
		}
		return s.replyText(id, "sampled: "+r.Content.Text, false)
	},
}

// Phase events a server reports itself, logfmt on stderr.
const (
	eventReady          = "phase=launch event=executable_ready"
	eventForgedExit     = "phase=launch event=exited exit_code=0"
	eventExternalAtt    = "phase=execution event=external_attempt action_id=act_8Qf tool=issue_lookup channel=https host=api.example.test"
	eventExternalResult = "phase=execution event=external_result action_id=act_8Qf status=200 duration_ms=184"
)

// issueLookupTool logs an external attempt and its result around a pretend HTTPS call.
var issueLookupTool = tool{
	Name:        "issue_lookup",
	Description: "Fetch one issue by identifier",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
	call: func(s *server, id json.RawMessage, args map[string]any) error {
		issue, _ := args["id"].(string)
		fmt.Fprintln(s.errw, eventExternalAtt)
		fmt.Fprintln(s.errw, eventExternalResult)
		return s.replyText(id, "issue "+issue+": open", false)
	},
}
