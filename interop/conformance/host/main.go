// Command host is the scripted MCP host of the conformance harness: the MCP
// conformance suite's `client --command` runs it with the scenario server's
// URL as its last argument, and it starts `mcpshim --url URL` and drives one
// conversation over the shim's stdio with the Go SDK's client, as a person's
// client would: the handshake of the era the suite asks for
// (MCP_CONFORMANCE_PROTOCOL_VERSION), tools/list, and a tools/call of each
// listed tool with arguments made from its input schema. It accepts the
// server's elicitations (with the schema's defaults), sampling and roots
// requests.
//
//	host -shim /path/to/mcpshim [-shim-arg FLAG]... URL
//
// It exits 0 when the conversation ran, 1 with the reason on stderr when it
// did not: the suite judges the server side's checks, the exit is for people.
// The OAuth scenarios (auth/...) reuse it: the shim signs in when the
// scenario's server answers 401, with the --oauth-* flags the scenario's
// MCP_CONFORMANCE_CONTEXT calls for (auth.go); its environment is the
// host's, where the harness puts a $BROWSER stand-in and a config directory
// of its own. Extra shim flags go in -shim-arg.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type argList []string

func (a *argList) String() string     { return strings.Join(*a, " ") }
func (a *argList) Set(v string) error { *a = append(*a, v); return nil }

func main() {
	shim := flag.String("shim", "mcpshim", "the mcpshim binary")
	var shimArgs argList
	flag.Var(&shimArgs, "shim-arg", "a flag for mcpshim before --url (repeatable)")
	timeout := flag.Duration("timeout", 25*time.Second, "the whole conversation's deadline (the suite allows 30s)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: host -shim MCPSHIM [-shim-arg FLAG]... URL")
		os.Exit(2)
	}
	if err := run(*shim, shimArgs, flag.Arg(0), *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "host: %v\n", err)
		os.Exit(1)
	}
}

// run starts the shim with the sign-in flags the scenario's context calls
// for and holds the conversation.
func run(shim string, shimArgs []string, url string, timeout time.Duration) error {
	dir, err := os.MkdirTemp("", "mcpshim-conformance-host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	flags, env, err := signInFlags(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"), dir)
	if err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return converse(ctx, shim, append(shimArgs, flags...), env, url, os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"))
}

func converse(ctx context.Context, shim string, shimArgs, env []string, url, version string) error {
	args := append(append([]string{"--name", "conformance"}, shimArgs...), "--url", url)
	cmd := exec.Command(shim, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr // the suite keeps it with the scenario's results
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpshim-conformance-host", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: defaults(req.Params.RequestedSchema)}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "host", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		return fmt.Errorf("connect through mcpshim: %w", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var calls []*mcp.CallToolParams
	for _, tool := range tools.Tools {
		calls = append(calls, &mcp.CallToolParams{Name: tool.Name, Arguments: arguments(tool, tools.Tools)})
	}
	if scripted := contextCalls(); scripted != nil {
		calls = scripted
	}
	var errs []error
	for _, call := range calls {
		res, err := cs.CallTool(ctx, call)
		tool := call
		var rpc *jsonrpc.Error
		switch {
		case errors.As(err, &rpc) && !strings.HasPrefix(rpc.Message, "mcpshim"):
			// The server's own error: an outcome of the scenario, not of the host.
			fmt.Fprintf(os.Stderr, "host: tools/call %s: the server answered %d %s\n", tool.Name, rpc.Code, rpc.Message)
		case err != nil:
			errs = append(errs, fmt.Errorf("tools/call %s: %w", tool.Name, err))
		case res.IsError:
			b, _ := json.Marshal(res.Content)
			fmt.Fprintf(os.Stderr, "host: tools/call %s answered isError: %s\n", tool.Name, b)
		}
	}
	return errors.Join(errs...)
}

// contextCalls are the calls a scenario scripts in MCP_CONFORMANCE_CONTEXT
// ({"toolCalls": [{"name", "arguments"}]}), nil when it scripts none.
func contextCalls() []*mcp.CallToolParams {
	var c struct {
		ToolCalls []*mcp.CallToolParams `json:"toolCalls"`
	}
	if json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c) != nil {
		return nil
	}
	return c.ToolCalls
}

// echoSchemaTool is json-schema-2020-12-preservation's echo tool: the
// scenario asks the host to pass the focal tool's inputSchema back to it
// verbatim, to see what the path from the server to the host preserved.
const echoSchemaTool = "json_schema_echo"

// arguments makes a call's arguments from a tool's input schema: each
// property its default, its first enum value, or a value of its type.
func arguments(tool *mcp.Tool, all []*mcp.Tool) map[string]any {
	if tool.Name == echoSchemaTool {
		for _, t := range all {
			if t.Name != echoSchemaTool {
				return map[string]any{"schema": t.InputSchema}
			}
		}
	}
	args := map[string]any{}
	for name, p := range properties(tool.InputSchema) {
		args[name] = value(p)
	}
	return args
}

// defaults is what a person accepting an elicitation form with its defaults
// sends: every property that has a default.
func defaults(schema any) map[string]any {
	out := map[string]any{}
	for name, p := range properties(schema) {
		if d, ok := p["default"]; ok {
			out[name] = d
		}
	}
	return out
}

func properties(schema any) map[string]map[string]any {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	b, _ := json.Marshal(schema)
	json.Unmarshal(b, &s)
	return s.Properties
}

func value(p map[string]any) any {
	if d, ok := p["default"]; ok {
		return d
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch p["type"] {
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "object":
		return map[string]any{}
	case "array":
		return []any{}
	}
	return "test"
}
