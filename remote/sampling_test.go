package remote_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerAsksTheClient: a tool that asks the client for a sampling
// completion in the middle of its call. The server's request arrives on the
// call's event stream and reaches the client; the client's answer is POSTed
// back, and the call completes, through the bridge as directly.
func TestServerAsksTheClient(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the client's model."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "ping?"}}},
				MaxTokens: 10,
			})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil, nil
		})
	srv := serve(t, "127.0.0.1:0", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	client := mcp.NewClient(&mcp.Implementation{Name: "sampler", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "pong"}}, nil
		},
	})
	ask := func(tr mcp.Transport) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("tools/call ask: %v", err)
		}
		return mustJSON(res)
	}
	want := ask(&mcp.StreamableClientTransport{Endpoint: srv.url()})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := shimCommand(t, ledger, "--url", srv.url())
	if got := ask(&mcp.CommandTransport{Command: cmd}); got != want {
		t.Fatalf("through the bridge: %s, want %s\nstderr:\n%s", got, want, stderrOf(cmd))
	}
	recs := waitEvent(t, ledger, "disconnected", 1)
	recs = readLedger(t, ledger)
	answered := false
	for _, r := range events(recs, "http_exchange") {
		if r.str("http_method") == "POST" && r.str("method") == "" && r["status"] == 202.0 {
			answered = true // the client's answer to sampling/createMessage
		}
	}
	if !answered {
		t.Errorf("no POST of the client's answer in the ledger\n%s", eventList(recs))
	}
}
