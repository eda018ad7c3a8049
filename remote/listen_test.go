package remote_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubscriptionsListen: a 2026-07-28 client with a tools/list_changed
// handler opens a subscriptions/listen stream; a tool added on the server
// reaches the client as a notification on it, through the bridge.
func TestSubscriptionsListen(t *testing.T) {
	var ran counters
	s := newServer(&ran, nil)
	srv := serve(t, "127.0.0.1:0", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.url())
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Skipf("negotiated %s: no subscriptions/listen", v)
	}
	waitRecord(t, ledger, "the listen stream open", func(r record) bool {
		return r.str("event") == "http_exchange" && r.str("method") == "subscriptions/listen" && r["status"] == 200.0
	})
	mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Added after the client connected."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("no tools/list_changed reached the client\nstderr:\n%s", stderrOf(cmd))
	}
}
