package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// owedError decodes the shim's error answer.
func owedError(t *testing.T, line string) (message string, data map[string]any) {
	t.Helper()
	var r struct {
		Error *struct {
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error == nil {
		t.Fatalf("got %s, want a JSON-RPC error (%v)", line, err)
	}
	return r.Error.Message, r.Error.Data
}

// TestOwedErrorsCarryTheCause: the message a client shows for a server that
// is not running says why, in the words of the spawn error or of the
// server's own stderr, not only on the shim's stderr.
func TestOwedErrorsCarryTheCause(t *testing.T) {
	t.Run("missing binary", func(t *testing.T) {
		s := start(t, true, nil, "no-such-mcp-server-xyz")
		msg, data := owedError(t, s.call("1", "initialize", initParams))
		if want := `mcpshim: server test cannot start: executable file not found in PATH: "no-such-mcp-server-xyz"; the request was not answered`; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		if data["error_class"] != "not_found" || data["hint"] == nil {
			t.Errorf("data = %v, want error_class not_found and a hint", data)
		}
		s.finish()
	})
	t.Run("fatal exit", func(t *testing.T) {
		s := start(t, true, nil, fatalServer...)
		msg, data := owedError(t, s.call("1", "initialize", initParams))
		if want := "mcpshim: server test exited with code 1 before answering: fatal: missing API key"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		if tail, _ := data["stderr_tail"].([]any); len(tail) != 1 || tail[0] != "fatal: missing API key" {
			t.Errorf("data.stderr_tail = %v, want [fatal: missing API key]", data["stderr_tail"])
		}
		s.finish()
	})
	t.Run("node crash while answering", func(t *testing.T) {
		node := needTool(t, "nodejs", "node")
		// Node's crash output ends in its version line; the cause is the Error line.
		script := filepath.Join(t.TempDir(), "server.js")
		os.WriteFile(script, []byte(`console.error("Weather MCP server v1.2.0 running on stdio");
process.stdin.once("data", () => { throw new Error("WEATHER_API_KEY is not set"); });
`), 0o600)
		s := start(t, true, []string{"--restart", "never"}, node, script)
		msg, _ := owedError(t, s.call("1", "initialize", initParams))
		if want := "mcpshim: server test exited with code 1 before answering: Error: WEATHER_API_KEY is not set"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		s.finish()
		ex := find(s.entries(), "exited")
		if ex == nil || ex.Str("stderr_cause") != "Error: WEATHER_API_KEY is not set" {
			t.Errorf("exited = %+v, want stderr_cause Error: WEATHER_API_KEY is not set", ex)
		}
		if !strings.Contains(s.stderr.String(), "its stderr said: Error: WEATHER_API_KEY is not set") {
			t.Errorf("the shim's stderr does not name the cause:\n%s", s.stderr)
		}
	})
}
