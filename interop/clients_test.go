//go:build !windows

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	gomcp "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// client is one MCP client of the matrix. run launches argv (the server, the
// shim, or a tee in front of either) the way the SDK does, lists the tools,
// makes s.call when calls is set, closes the session the SDK's way, and
// reports what it saw. The launched processes' stderr goes to stderr.
type client struct {
	name   string
	needs  string
	modern bool // starts with server/discover (2026-07-28) and falls back to initialize
	calls  bool
	run    func(ctx context.Context, argv, env []string, stderr *os.File, s serverRun) (outcome, error)
}

// outcome is what a client saw in one session, as JSON decoded and encoded
// again by the client's SDK: two runs of one pair must produce equal outcomes.
type outcome struct {
	Protocol string          `json:"protocol,omitempty"` // negotiated, when the SDK says
	Tools    []string        `json:"tools"`              // names, in the server's order
	Listed   json.RawMessage `json:"listed"`             // the whole tools/list result
	Call     json.RawMessage `json:"call,omitempty"`     // the tools/call result
}

// Versions the Go SDK client is forced to.
const legacyVersion = "2025-11-25"

var clients = []client{
	{name: "gosdk-modern", modern: true, calls: true, run: goSDKSession("")},
	{name: "gosdk-legacy", calls: true, run: goSDKSession(legacyVersion)},
	{name: "mcpgo", modern: true, calls: true, run: mcpgoSession},
	{name: "typescript", needs: "node", run: inspectorSession},
}

// goSDKSession is the official Go SDK client with CommandTransport; version
// "" is its default (2026-07-28 with the initialize fallback).
func goSDKSession(version string) func(context.Context, []string, []string, *os.File, serverRun) (outcome, error) {
	return func(ctx context.Context, argv, env []string, stderr *os.File, s serverRun) (o outcome, err error) {
		c := goSDKClient(s.root)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = stderr
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
		if err != nil {
			return o, fmt.Errorf("connect: %w", err)
		}
		defer func() {
			if cerr := cs.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("close: %w", cerr)
			}
		}()
		o.Protocol = cs.InitializeResult().ProtocolVersion
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return o, fmt.Errorf("tools/list: %w", err)
		}
		for _, tool := range tools.Tools {
			o.Tools = append(o.Tools, tool.Name)
		}
		if o.Listed, err = json.Marshal(tools); err != nil {
			return o, err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.call.name, Arguments: s.call.args})
		if err != nil {
			return o, fmt.Errorf("tools/call %s: %w", s.call.name, err)
		}
		o.Call, err = json.Marshal(res)
		return o, err
	}
}

// goSDKClient is the Go SDK's client, offering root as its only root. With
// root "" it offers no roots capability at all: a server that asks for roots
// (server-everything does, 350ms after initialized) would otherwise outlive a
// short session on a request the client no longer answers.
func goSDKClient(root string) *mcp.Client {
	impl := &mcp.Implementation{Name: "interop-gosdk", Version: "1.8.0"}
	if root == "" {
		return mcp.NewClient(impl, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	}
	c := mcp.NewClient(impl, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + root, Name: "root"})
	return c
}

// mcpgoSession is mark3labs/mcp-go's stdio client with its default version
// (2026-07-28 with the initialize fallback).
func mcpgoSession(ctx context.Context, argv, env []string, stderr *os.File, s serverRun) (o outcome, err error) {
	t := transport.NewStdioWithOptions(argv[0], env, argv[1:], transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = stderr
			return cmd, nil
		}))
	if err := t.Start(context.Background()); err != nil {
		return o, fmt.Errorf("start: %w", err)
	}
	// mcp-go falls back to initialize when server/discover is unanswered for
	// 5 s: a node server starting on a loaded machine takes that long, and the
	// session's era would depend on the load. The fallback is tested on a
	// refusal, so the probe waits as long as the session may.
	c := gomcp.NewClient(t, gomcp.WithDiscoverTimeout(time.Minute))
	defer func() {
		if cerr := c.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	return mcpgoConverse(ctx, c, s.call)
}

// mcpgoConverse holds one session on a started mcp-go client: initialize,
// tools/list, one tools/call.
func mcpgoConverse(ctx context.Context, c *gomcp.Client, call toolCall) (o outcome, err error) {
	init, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "interop-mcpgo", Version: "1.2.1"},
	}})
	if err != nil {
		return o, fmt.Errorf("initialize: %w", err)
	}
	o.Protocol = init.ProtocolVersion
	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return o, fmt.Errorf("tools/list: %w", err)
	}
	for _, tool := range tools.Tools {
		o.Tools = append(o.Tools, tool.Name)
	}
	if o.Listed, err = json.Marshal(tools); err != nil {
		return o, err
	}
	res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: call.name, Arguments: call.args}})
	if err != nil {
		return o, fmt.Errorf("tools/call %s: %w", call.name, err)
	}
	o.Call, err = json.Marshal(res)
	return o, err
}

// inspectorSession is the TypeScript SDK's client, driven by inspector-cli in
// its CLI mode: connect, tools/list, print the result, close. It runs
// build/index.js, which is what `inspector-cli --cli` runs in a second node
// process; the cwd is build/ because index.js finds its package.json from it.
func inspectorSession(ctx context.Context, argv, env []string, stderr *os.File, s serverRun) (o outcome, err error) {
	build := filepath.Join(bins.modules, "@modelcontextprotocol", "inspector-cli", "build")
	// The target's first word goes before the options' end; its arguments
	// after --, where inspector-cli leaves them alone.
	args := slices.Concat([]string{filepath.Join(build, "index.js"), "--method", "tools/list", argv[0], "--"}, argv[1:])
	cmd := exec.CommandContext(ctx, bins.node, args...)
	cmd.Dir = build
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return o, fmt.Errorf("inspector-cli: %w", err)
	}
	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &listed); err != nil {
		return o, fmt.Errorf("inspector-cli output: %w", err)
	}
	for _, tool := range listed.Tools {
		o.Tools = append(o.Tools, tool.Name)
	}
	o.Listed = json.RawMessage(out)
	return o, nil
}
