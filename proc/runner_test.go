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
		{"npx.cmd -y x", true},
		{"NPX.CMD -y x", true},
		{"uvx.exe mcp-server-fetch", true},
		{"cmd /c npx -y x", true},
		{"cmd.exe /C npx -y x", true},
		{"cmd /c node server.js", false},
		{"cmd /c", false},
	}
	for _, tt := range tests {
		f := strings.Fields(tt.argv)
		if got := PackageRunner(f[0], f[1:]); got != tt.want {
			t.Errorf("PackageRunner(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}
