package proc

import (
	"strings"
	"testing"
)

func TestLabel(t *testing.T) {
	cases := map[string]string{
		"npx -y @modelcontextprotocol/server-filesystem /tmp":                 "server-filesystem",
		"npx -y @modelcontextprotocol/server-memory@2025.1.1":                 "server-memory",
		"uvx mcp-server-git --repository .":                                   "mcp-server-git",
		"node /Users/dev/work/acme-mcp/dist/index.js":                         "acme-mcp",
		"python3 -m weather_server":                                           "weather_server",
		"python3 ./report_server.py":                                          "report_server",
		"docker run -i --rm -e TOKEN ghcr.io/github/github-mcp-server:latest": "github-mcp-server",
		"/usr/local/bin/my-server --flag":                                     "my-server",
		"node /home/dev/app/node_modules/@acme/server-memory/dist/index.js":   "server-memory",
		"npx -y mcp-remote@latest https://x.test/mcp":                         "mcp-remote",
	}
	for cmd, want := range cases {
		if got := Label(strings.Fields(cmd)); got != want {
			t.Errorf("Label(%q) = %q, want %q", cmd, got, want)
		}
	}
}
