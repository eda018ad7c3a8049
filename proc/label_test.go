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

// TestLabelWindows: the spellings of Windows configs name the same server.
func TestLabelWindows(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"npx.cmd", "-y", "@modelcontextprotocol/server-memory"}, "server-memory"},
		{[]string{`C:\Program Files\nodejs\NPX.CMD`, "-y", "@acme/server-x@1.2.3"}, "server-x"},
		{[]string{"cmd", "/c", "npx", "-y", "@acme/server-x"}, "server-x"},
		{[]string{"cmd.exe", "/C", "npx -y @acme/server-x"}, "server-x"},
		{[]string{"uvx.exe", "mcp-server-git"}, "mcp-server-git"},
		{[]string{`C:\Tools\My Server\my-server.exe`, "--flag"}, "my-server"},
		{[]string{"cmd", "/c"}, "cmd"},
	}
	for _, tt := range tests {
		if got := Label(tt.argv); got != tt.want {
			t.Errorf("Label(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// TestLabelContainer: a container's server is named after its image, past
// the engine's valued options, whichever spelling of run.
func TestLabelContainer(t *testing.T) {
	cases := map[string]string{
		"docker run -i --rm --network host ghcr.io/github/github-mcp-server":                           "github-mcp-server",
		"docker run -i --rm --mount type=bind,src=/tmp,dst=/data mcp/filesystem /data":                 "filesystem",
		"docker run -i --rm --env-file ./env mcp/postgres postgres://db":                               "postgres",
		"docker run -i --rm --pull never mcp/time":                                                     "time",
		"docker container run -i --rm mcp/fetch":                                                       "fetch",
		"docker --context remote run -i --rm mcp/git":                                                  "git",
		"docker -H unix:///tmp/d.sock run -it --rm mcp/git":                                            "git",
		"docker run -i --rm -e GITHUB_TOKEN -eX=1 -p8080:80 -v /a:/b ghcr.io/github/github-mcp-server": "github-mcp-server",
		"docker run --interactive --rm --name gh --network=none mcp/gh:1.2":                            "gh",
		"podman run -i --rm --userns keep-id --replace quay.io/acme/notes-mcp@sha256:abc":              "notes-mcp",
		"docker.exe run -i --rm -- mcp/sqlite --db /x":                                                 "sqlite",
		"docker exec -i mycontainer server":                                                            "mycontainer",
	}
	for cmd, want := range cases {
		if got := Label(strings.Fields(cmd)); got != want {
			t.Errorf("Label(%q) = %q, want %q", cmd, got, want)
		}
	}
}
