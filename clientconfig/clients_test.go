package clientconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestClientFixtures reads each client's fixture, written the way that
// client writes its file, from the places the client reads, then wraps and
// unwraps every file: the wrapped file still parses by the client's rules
// with every stdio entry behind the shim, comments and trailing commas kept,
// and unwrap gives back the original bytes.
func TestClientFixtures(t *testing.T) {
	tests := []struct {
		client string
		files  []string // under the fixture, as Find returns them
		// NAME TYPE COMMAND-or-URL, "disabled" appended for an entry the client does not start
		servers  []string
		problems []string
	}{
		{"codex", []string{"project/.codex/config.toml", "home/.codex/config.toml"}, []string{
			"repo-tools stdio uvx",
			"docs http https://docs.example.test/mcp",
			"fs stdio npx",
			"memory stdio npx",
			"tickets stdio /usr/local/bin/tickets-mcp disabled",
		}, nil},
		{"gemini", []string{"project/.gemini/settings.json", "home/.gemini/settings.json"}, []string{
			"fs stdio npx",
			"github http https://api.githubcopilot.com/mcp/",
			"events sse https://events.example.test/sse",
			"memory stdio npx",
		}, []string{"home/.gemini/settings.json: github: headers.Authorization: $GITHUB_PAT is not set"}},
		{"windsurf", []string{"home/.codeium/windsurf/mcp_config.json"}, []string{
			"github stdio npx",
			"figma http https://mcp.figma.example.test/mcp",
		}, []string{"home/.codeium/windsurf/mcp_config.json: github: env.GITHUB_PERSONAL_ACCESS_TOKEN: ${env:GH_TOKEN} is not set"}},
		{"vscode-user", []string{"home/.config/Code/User/mcp.json"}, []string{
			"memory stdio npx",
			"fetch http https://fetch.example.test/mcp",
		}, nil},
		{"cline", []string{"home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"}, []string{
			"memory stdio npx",
			"time stdio uvx disabled",
			"linear http https://mcp.linear.example.test/mcp",
		}, nil},
		{"zed", []string{"project/.zed/settings.json", "home/.config/zed/settings.json"}, []string{
			"postgres stdio postgres-mcp disabled",
			"legacy stdio legacy-mcp",
			"memory stdio npx",
			"remote http https://remote.example.test/mcp",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			dir, err := filepath.Abs(filepath.Join("testdata", "clients", tt.client))
			if err != nil {
				t.Fatal(err)
			}
			project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
			getenv := func(k string) string {
				if k == "HOME" {
					return home
				}
				return fixtureEnv(home)(k)
			}
			files := Find(project, home, getenv)
			var want []string
			for _, f := range tt.files {
				want = append(want, filepath.Join(dir, f))
			}
			if !slices.EqualFunc(files, want, samePath) {
				t.Fatalf("Find(%s, %s) = %q, want %q", project, home, files, want)
			}
			lookup := func(k string) (string, bool) { return getenv(k), k == "HOME" }
			servers, problems, err := Load(files, lookup)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range servers {
				line := fmt.Sprintf("%s %s %s", s.Name, s.Type, s.Command+s.URL)
				if s.Disabled {
					line += " disabled"
				}
				got = append(got, line)
			}
			if !slices.Equal(got, tt.servers) {
				t.Errorf("Load servers:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.servers, "\n"))
			}
			var probs []string
			for _, p := range problems {
				probs = append(probs, filepath.ToSlash(strings.TrimPrefix(p.String(), dir+string(filepath.Separator))))
			}
			if !slices.Equal(probs, tt.problems) {
				t.Errorf("Load problems = %q, want %q", probs, tt.problems)
			}

			for _, f := range files {
				orig, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				wrapped, entries, err := Wrap(f, orig, "/opt/mcpshim/bin/mcpshim", []string{"--ledger", "/var/log/mcp"}, Scope{})
				if err != nil {
					t.Fatalf("Wrap %s: %v", f, err)
				}
				for _, e := range entries {
					if e.Result == SkippedBroken {
						t.Errorf("Wrap %s: %s skipped: %s", f, e.Server, e.Reason)
					}
				}
				tmp := filepath.Join(t.TempDir(), strings.TrimPrefix(f, dir))
				if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(tmp, wrapped, 0o644); err != nil {
					t.Fatal(err)
				}
				after, _, err := Load([]string{tmp}, lookup)
				if err != nil {
					t.Fatalf("the wrapped %s does not parse: %v\n%s", f, err, wrapped)
				}
				for _, s := range after {
					if s.Type == "stdio" && (!s.Wrapped || !slices.Equal(s.ShimArgs, []string{"--name", s.Name, "--ledger", "/var/log/mcp"})) {
						t.Errorf("wrapped %s: %s is %+v, want it behind the shim\n%s", f, s.Name, s, wrapped)
					}
				}
				for _, c := range [][]byte{[]byte("//"), []byte("#"), []byte(",\n")} {
					if n, m := bytes.Count(orig, c), bytes.Count(wrapped, c); m < n {
						t.Errorf("wrapped %s has %d %q, the original %d", f, m, c, n)
					}
				}
				back, _, err := Unwrap(tmp, wrapped, Scope{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, orig) {
					t.Errorf("unwrap of the wrapped %s:\n%s\nwant the original\n%s", f, back, orig)
				}
			}
		})
	}
}

// TestWrapTOML: Codex tables as people write them; the splice keeps every
// other byte, and unwrap restores the original.
func TestWrapTOML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no args", "[mcp_servers.t]\ncommand = \"tickets\"\nenabled = true\n",
			"[mcp_servers.t]\ncommand = \"/s/mcpshim\"\nargs = [ \"--name\", \"t\", \"--\", \"tickets\" ]\nenabled = true\n"},
		{"no args at the end, crlf", "[mcp_servers.t]\r\ncommand = 'tickets' # literal",
			"[mcp_servers.t]\r\ncommand = \"/s/mcpshim\" # literal\r\nargs = [ \"--name\", \"t\", \"--\", 'tickets' ]"},
		{"args before command", "[mcp_servers.\"my fs\"]\nargs = [\"-y\", \"fs\"] # why\ncommand = \"npx\"\n",
			"[mcp_servers.\"my fs\"]\nargs = [\"--name\", \"my fs\", \"--\", \"npx\", \"-y\", \"fs\"] # why\ncommand = \"/s/mcpshim\"\n"},
		{"multi-line args", "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\n  \"-y\", # quiet\n  \"fs\",\n]\n",
			"[mcp_servers.fs]\ncommand = \"/s/mcpshim\"\nargs = [\n  \"--name\",\n  \"fs\",\n  \"--\",\n  \"npx\",\n  \"-y\", # quiet\n  \"fs\",\n]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Wrap("config.toml", []byte(tt.in), "/s/mcpshim", nil, Scope{})
			if err != nil || string(got) != tt.want {
				t.Fatalf("Wrap(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			back, _, err := Unwrap("config.toml", got, Scope{})
			if err != nil || string(back) != tt.in {
				t.Errorf("Unwrap(%q) = %q, %v; want the original %q", got, back, err, tt.in)
			}
		})
	}
	// An entry written with dotted keys is read, and left alone by a rewrite.
	in := "mcp_servers.d.command = \"x\"\n"
	out, entries, err := Wrap("config.toml", []byte(in), "/s/mcpshim", nil, Scope{})
	if err != nil || string(out) != in || len(entries) != 1 || entries[0].Result != SkippedBroken {
		t.Errorf("Wrap(%q) = %q, %+v, %v; want it unchanged and the entry skipped", in, out, entries, err)
	}
}

// samePath compares paths as the system does: without case on Windows
// (Zed's %APPDATA%\Zed is the fixture's .config/zed).
func samePath(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}
