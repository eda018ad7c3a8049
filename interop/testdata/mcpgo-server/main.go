// Command mcpgo-server is an MCP server on stdio written with mark3labs/mcp-go.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("mcpgo-server", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns the message."),
		mcp.WithString("message", mcp.Required(), mcp.Description("the text to send back"))),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			msg, err := req.RequireString("message")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(msg), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds two integers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetInt("a", 0) + req.GetInt("b", 0))), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgo-server: %v\n", err)
		os.Exit(1)
	}
}
