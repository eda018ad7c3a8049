package remote

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// Challenge asks the server, unauthenticated, for its challenge: a
// legacy initialize, which every server takes before anything else. A
// server that answers without one is signed in to from its metadata.
func Challenge(ctx context.Context, u *url.URL) (int, []string) {
	body, _ := mcp.Era{}.Request(mcp.StringID("mcpshim-auth"), mcp.MethodInitialize, map[string]any{
		"protocolVersion": mcp.LegacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpshim", "version": "auth"}})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Values("Www-Authenticate")
}
