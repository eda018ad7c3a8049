package proc

import (
	"strings"
	"testing"
)

func TestPackageRunner(t *testing.T) {
	tests := []struct {
		argv string
		want bool
	}{
		{"npx -y @modelcontextprotocol/server-filesystem /tmp", true},
		{"/usr/local/bin/npx -y x", true},
		{"uvx mcp-server-fetch", true},
		{"uv tool run mcp-server-fetch", true},
		{"uv run server.py", true},
		{"pnpm dlx x", true},
		{"bunx x", true},
		{"npm exec -- x", true},
		{"npm start", false},
		{"node dist/index.js", false},
		{"python3 -m server", false},
		{"uv pip list", false},
		{"docker run -i x", false},
	}
	for _, tt := range tests {
		f := strings.Fields(tt.argv)
		if got := PackageRunner(f[0], f[1:]); got != tt.want {
			t.Errorf("PackageRunner(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}
