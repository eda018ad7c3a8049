package remote_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestParamHeaders: in a 2026-07-28 session the bridge drops a tool whose
// x-mcp-header declarations are invalid from the list the client sees, and
// mirrors the declared parameters of a tools/call into Mcp-Param-* headers
// (Base64 for a value that is not plain printable ASCII).
func TestParamHeaders(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	s := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		result := `{"content":[]}`
		if req.Method == "tools/list" {
			result = `{"tools":[` +
				`{"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"note":{"type":"string","x-mcp-header":"Note"},"q":{"type":"string"}}}},` +
				`{"name":"bad","inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}}]}`
		} else {
			mu.Lock()
			got = r.Header.Clone()
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	c := startRaw(t, shimCommand(t, ledger, "--url", s.url()))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`)
	list := mustJSON(c.answer(1))
	if !strings.Contains(list, `"good"`) || strings.Contains(list, `"bad"`) {
		t.Errorf("tools/list through the bridge = %s, want good and not bad", list)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"good","arguments":{"region":"us-west1","n":42,"note":" Grüße ","q":"x"},` + meta + `}}`)
	c.answer(2)
	mu.Lock()
	defer mu.Unlock()
	for h, want := range map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-N": "42", "Mcp-Param-Note": "=?base64?IEdyw7zDn2Ug?=", "Mcp-Param-Q": ""} {
		if v := got.Get(h); v != want {
			t.Errorf("%s = %q, want %q", h, v, want)
		}
	}
	c.in.Close()
	c.exitCode()
	if d := events(readLedger(t, ledger), "tool_dropped"); len(d) != 1 || d[0].str("tool") != "bad" {
		t.Errorf("tool_dropped = %v, want one for bad", d)
	}
}
