package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/redact"
)

// Canary calls one tool after listing and judges its answer: the only probe
// that reaches whatever the tool itself depends on, such as an upstream API
// key. It runs on every probe, so it must name a cheap read-only tool, never
// one that writes, bills or sends.
type Canary struct {
	Server string
	Tool   string
	Args   json.RawMessage // a JSON object
	Expect *regexp.Regexp  // must match the text the tool answers
}

// How a canary failed. Each calls for a different fix.
const (
	CanaryMissingTool = "missing_tool" // tools/list does not offer the tool
	CanaryRPCError    = "rpc_error"    // the call was refused with a JSON-RPC error
	CanaryIsError     = "is_error"     // the tool ran and reported failure (isError: true)
	CanaryMismatch    = "mismatch"     // the answer does not match the expectation
)

// CanaryResult is the verdict on one canary.
type CanaryResult struct {
	Tool    string `json:"tool"`
	OK      bool   `json:"ok"`
	Failure string `json:"failure,omitempty"` // one of CanaryMissingTool...
	Detail  string `json:"detail"`
}

// ParseCanary reads SERVER:TOOL:{"json":"args"}:REGEX. The arguments are one
// JSON object; everything after the colon that follows it is the regular
// expression, colons included.
func ParseCanary(spec string) (Canary, error) {
	server, rest, ok1 := strings.Cut(spec, ":")
	tool, rest, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || server == "" || tool == "" {
		return Canary{}, fmt.Errorf("%w: %q", ErrBadCanary, spec)
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	var args json.RawMessage
	if err := dec.Decode(&args); err != nil {
		return Canary{}, fmt.Errorf("%w: %q: arguments: %v", ErrBadCanary, spec, err)
	}
	var obj map[string]any
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return Canary{}, fmt.Errorf("%w: %q: arguments must be a JSON object", ErrBadCanary, spec)
	}
	tail := rest[dec.InputOffset():]
	if !strings.HasPrefix(tail, ":") {
		return Canary{}, fmt.Errorf("%w: %q: no :REGEX after the arguments", ErrBadCanary, spec)
	}
	re, err := regexp.Compile(tail[1:])
	if err != nil {
		return Canary{}, fmt.Errorf("%w: %q: %v", ErrBadCanary, spec, err)
	}
	return Canary{Server: server, Tool: tool, Args: args, Expect: re}, nil
}

// runCanaries calls the canaries aimed at this server. Only a deadline or a
// dead server ends the probe; a failed canary is a verdict of its own.
func (s *session) runCanaries(ctx context.Context) error {
	for _, c := range s.opts.Canaries {
		if c.Server != s.target.Name {
			continue
		}
		res := CanaryResult{Tool: c.Tool, Failure: CanaryMissingTool, Detail: fmt.Sprintf("tools/list has no %s", c.Tool)}
		if s.offers(c.Tool) {
			a, err := s.call(ctx, mcp.MethodCallTool, map[string]any{"name": c.Tool, "arguments": c.Args})
			if err != nil {
				return err
			}
			res = judgeCanary(c, a)
		}
		s.r.Canaries = append(s.r.Canaries, res)
		// The verdict is the ledger's too: the probe's line and the ledger's row say the same.
		s.r.Timeline = append(s.r.Timeline, Step{At: time.Now(), Event: "canary", Tool: res.Tool, Result: cmp.Or(res.Failure, "ok"), Detail: res.Detail})
	}
	return nil
}

func (s *session) offers(tool string) bool {
	for _, t := range s.r.Tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}

func judgeCanary(c Canary, a answer) CanaryResult {
	res := CanaryResult{Tool: c.Tool}
	if a.rpcErr != nil {
		res.Failure = CanaryRPCError
		res.Detail = fmt.Sprintf("%s: JSON-RPC error %d: %s", c.Tool, a.rpcErr.Code, a.rpcErr.Message)
		return res
	}
	var out struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(a.result, &out); err != nil {
		res.Failure = CanaryRPCError
		res.Detail = fmt.Sprintf("%s: unreadable tools/call result: %v", c.Tool, err)
		return res
	}
	var texts []string
	for _, part := range out.Content {
		if part.Type == "text" {
			texts = append(texts, part.Text)
		}
	}
	text := strings.Join(texts, " ")
	if text == "" && len(out.StructuredContent) > 0 {
		text = string(out.StructuredContent)
	}
	shown := truncate(redact.String(text), 200)
	switch {
	case out.IsError:
		res.Failure, res.Detail = CanaryIsError, fmt.Sprintf("%s returned isError: %s", c.Tool, shown)
	case !c.Expect.MatchString(text):
		res.Failure, res.Detail = CanaryMismatch, fmt.Sprintf("%s answered %q, which fails /%s/", c.Tool, shown, c.Expect)
	default:
		res.OK, res.Detail = true, fmt.Sprintf("%s -> %s", c.Tool, shown)
	}
	return res
}

// callOutcome is a tools/call answer's outcome in the shim's words: a
// JSON-RPC error, a tool that reported failure (isError), or success.
func callOutcome(a answer) string {
	if a.rpcErr != nil {
		return mcp.OutcomeRPCError
	}
	var out struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(a.result, &out) == nil && out.IsError {
		return mcp.OutcomeIsError
	}
	return mcp.OutcomeSuccess
}
