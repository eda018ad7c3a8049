package remote_test

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConnectionsKept: the bridge's requests share their connections. A
// POST's answer streamed as SSE was closed unread after the answer, before
// the server's end of the stream, so each call dialled a new connection
// (80 µs of the bridge's CPU a call, and a socket in TIME_WAIT).
func TestConnectionsKept(t *testing.T) {
	for _, srv := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{
		{"sse-sessions", nil},
		{"stateless-json", &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		t.Run(srv.name, func(t *testing.T) {
			var ran counters
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, srv.opts)
			var mu sync.Mutex
			posts := map[string]int{} // client address -> POSTs on it
			s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					mu.Lock()
					posts[r.RemoteAddr]++
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			}))
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: shimCommand(t, filepath.Join(t.TempDir(), "l.jsonl"), "--url", s.url())}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			const calls = 40
			for range calls {
				if _, err := echo(ctx, cs, "x"); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(posts) > 4 {
				t.Errorf("%d tools/call and the handshake's POSTs came on %d connections, want at most 4: %v", calls, len(posts), posts)
			}
		})
	}
}
