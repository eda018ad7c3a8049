package clientconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// env is a lookup over a fixed set of variables.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	lookup := env("TOKEN", "s3cret", "EMPTY", "", "HOME", "/home/dev", "HOST", "api.test")
	tests := []struct {
		d         dialect
		workspace string
		in, want  string
		problems  []string
	}{
		{claudeCode, "", "${TOKEN}", "s3cret", nil},
		{claudeCode, "", "Bearer ${TOKEN}", "Bearer s3cret", nil},
		{claudeCode, "", "https://${HOST}/v1?k=${TOKEN}&again=${TOKEN}", "https://api.test/v1?k=s3cret&again=s3cret", nil},
		{claudeCode, "", "${LEVEL:-info}", "info", nil},
		{claudeCode, "", "--level=${LEVEL:-}", "--level=", nil},
		{claudeCode, "", "${TOKEN:-unused}", "s3cret", nil},
		{claudeCode, "", "${EMPTY:-fallback}", "", nil}, // set but empty counts as set, as in Claude Code
		{claudeCode, "", "Bearer ${NOPE}", "Bearer ${NOPE}", []string{"${NOPE} is not set and has no default"}},
		{claudeCode, "", "${A}-${B:-b}-${C}", "${A}-b-${C}", []string{"${A} is not set and has no default", "${C} is not set and has no default"}},
		{claudeCode, "", "$TOKEN and ${} and ${TOKEN", "$TOKEN and ${} and ${TOKEN", nil},
		{claudeCode, "", "${env:TOKEN}", "${env:TOKEN}", []string{"${env:TOKEN} is not set and has no default"}},
		{vsCode, "/w/app", "${env:TOKEN}", "s3cret", nil},
		{vsCode, "/w/app", "Bearer ${env:TOKEN}", "Bearer s3cret", nil},
		{vsCode, "/w/app", "${env:NOPE}", "${env:NOPE}", []string{"${env:NOPE} is not set"}},
		{vsCode, "/w/app", "${workspaceFolder}/tools", "/w/app/tools", nil},
		{vsCode, "/w/app", "${workspaceFolderBasename}", "app", nil},
		{vsCode, "", "${workspaceFolder}", "${workspaceFolder}", []string{"${workspaceFolder} has no workspace folder in a user-level config"}},
		{vsCode, "/w/app", "${userHome}${pathSeparator}x${/}y", "/home/dev" + sep + "x" + sep + "y", nil}, // the separator of the system the editor runs on
		{vsCode, "/w/app", "${input:key}", "${input:key}", []string{"${input:key} is prompted for by the editor; its value is unknown here"}},
		{vsCode, "/w/app", "${TOKEN}", "${TOKEN}", []string{"${TOKEN} is not a variable this client expands"}},
		{cursor, "/w/app", "Bearer ${env:TOKEN}", "Bearer s3cret", nil},
		{claudeDesktop, "", "${TOKEN}/x", "${TOKEN}/x", []string{"${TOKEN} reaches the server as written: Claude Desktop does not expand variables"}},
		{claudeDesktop, "", "plain", "plain", nil},
	}
	for _, tt := range tests {
		x := &expander{d: tt.d, lookup: lookup, workspace: tt.workspace}
		got, probs := x.expand(tt.in)
		if got != tt.want || !slices.Equal(probs, tt.problems) {
			t.Errorf("expand(dialect %d, %q) = %q, %q; want %q, %q", tt.d, tt.in, got, probs, tt.want, tt.problems)
		}
	}
}

func TestFindOrder(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	files := []string{
		filepath.Join(project, ".mcp.json"),
		filepath.Join(home, ".claude.json"),
		filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		filepath.Join(project, ".cursor", "mcp.json"),
		filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(project, ".vscode", "mcp.json"),
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := Find(project, home, fixtureEnv(home)); !slices.Equal(got, files) {
		t.Errorf("Find(%s, %s) = %q, want %q", project, home, got, files)
	}
	// The project is home: ~/.cursor/mcp.json is listed once.
	if got, want := Find(home, home, fixtureEnv(home)), []string{filepath.Join(home, ".claude.json"), filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), filepath.Join(home, ".cursor", "mcp.json")}; !slices.Equal(got, want) {
		t.Errorf("Find(%s, %s) = %q, want %q", home, home, got, want)
	}
	if got := Find("", "", noEnv); got != nil {
		t.Errorf(`Find("", "") = %q, want nothing`, got)
	}
}

func noEnv(string) string { return "" }

// fixtureEnv has the fixtures' ~/.config stand for %APPDATA% on Windows
// (elsewhere ~/.config is where the apps look without it).
func fixtureEnv(home string) func(string) string {
	return func(k string) string {
		if k == "APPDATA" {
			return filepath.Join(home, ".config")
		}
		return ""
	}
}

const sep = string(filepath.Separator)

// slashed is paths with / for separators, to compare them on any system.
func slashed(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.ToSlash(p)
	}
	return out
}

func TestCandidatesPerOS(t *testing.T) {
	tests := []struct{ goos, want string }{
		{"darwin", "/Users/dev/Library/Application Support/Claude/claude_desktop_config.json"},
		{"darwin", "/Users/dev/Library/Application Support/Code/User/mcp.json"},
		{"darwin", "/Users/dev/.config/zed/settings.json"},
		{"linux", "/Users/dev/.config/Claude/claude_desktop_config.json"},
		{"linux", "/Users/dev/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		{"linux", "/Users/dev/.codex/config.toml"},
		// Windows, %APPDATA% unset: the roaming profile under the home.
		{"windows", "/Users/dev/AppData/Roaming/Claude/claude_desktop_config.json"},
	}
	for _, tt := range tests {
		if got := slashed(Candidates("/p", "/Users/dev", tt.goos, noEnv)); !slices.Contains(got, tt.want) {
			t.Errorf("Candidates(/p, /Users/dev, %s) = %q, want it to hold %q", tt.goos, got, tt.want)
		}
	}
	env := func(k string) string { return map[string]string{"CODEX_HOME": "/c", "XDG_CONFIG_HOME": "/x"}[k] }
	got := slashed(Candidates("/p", "/Users/dev", "linux", env))
	for _, want := range []string{"/c/config.toml", "/x/Claude/claude_desktop_config.json", "/x/zed/settings.json"} {
		if !slices.Contains(got, want) {
			t.Errorf("Candidates with CODEX_HOME=/c XDG_CONFIG_HOME=/x = %q, want it to hold %q", got, want)
		}
	}
}

func TestLoadFixtures(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	vsProject := abs("testdata/vscode/project")
	cursorProject := abs("testdata/cursor/project")
	tests := []struct {
		name     string
		lookup   func(string) (string, bool)
		servers  []Server
		problems []string
	}{
		{
			name:   "claudecode",
			lookup: env("REPORT_API_TOKEN", "tok"),
			servers: []Server{
				{Name: "report", File: ".mcp.json", Type: "stdio", Command: "python3", Args: []string{"./report_server.py", "--token=tok"},
					Env: map[string]string{"REPORT_API_TOKEN": "tok", "LOG": "info"}},
				{Name: "remote", File: ".mcp.json", Type: "http", URL: "https://api.example.test/mcp",
					Headers: map[string]string{"Authorization": "Bearer tok"}},
				{Name: "ghost", File: ".mcp.json", Type: "stdio", Command: "${MISSING_BIN}"},
				{Name: "memory", File: ".claude.json", Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}},
				{Name: "db", File: ".claude.json", Project: "/home/dev/app", Type: "stdio", Command: "db-server", Args: []string{"--port", "5432"},
					Wrapped: true, ShimArgs: []string{"--name", "db", "--ledger", "/var/log/mcp"}},
				{Name: "notes", File: ".claude.json", Project: "/home/dev/app", Type: "stdio", Command: "npx", Args: []string{"-y", "srv"},
					Wrapped: true, ShimArgs: []string{"--name", "x"}},
			},
			problems: []string{".mcp.json: ghost: command: ${MISSING_BIN} is not set and has no default"},
		},
		{
			name:   "desktop",
			lookup: env("HOME", "/home/dev"),
			servers: []Server{
				{Name: "filesystem", File: "claude_desktop_config.json", Type: "stdio", Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "${HOME}/Documents"}},
			},
			problems: []string{"claude_desktop_config.json: filesystem: args[2]: ${HOME} reaches the server as written: Claude Desktop does not expand variables"},
		},
		{
			name:   "cursor",
			lookup: env("LINEAR_TOKEN", "lin", "HOME", abs("testdata/cursor/home")),
			servers: []Server{
				{Name: "linear", File: "mcp.json", Type: "http", URL: "https://mcp.linear.app/sse", Headers: map[string]string{"Authorization": "Bearer lin"}},
				{Name: "local", File: "mcp.json", Type: "stdio", Command: "node", Args: []string{cursorProject + "/server.js"},
					Env: map[string]string{"HOME_DIR": abs("testdata/cursor/home")}},
				{Name: "global", File: "mcp.json", Type: "stdio", Command: "uvx", Args: []string{"mcp-server-git", "--repository", "${workspaceFolder}"}},
			},
			problems: []string{"mcp.json: global: args[2]: ${workspaceFolder} has no workspace folder in a user-level config"},
		},
		{
			name:   "vscode",
			lookup: env("FILES_TOKEN", "ft"),
			servers: []Server{
				{Name: "github", File: "mcp.json", Type: "http", URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${input:gh-token}"}},
				{Name: "files", File: "mcp.json", Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", vsProject},
					Env: map[string]string{"TOKEN": "ft", "NAME": "project"}, Cwd: vsProject + "/tools"},
			},
			problems: []string{"mcp.json: github: headers.Authorization: ${input:gh-token} is prompted for by the editor; its value is unknown here"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join("testdata", tt.name)
			files := Find(filepath.Join(dir, "project"), filepath.Join(dir, "home"), fixtureEnv(filepath.Join(dir, "home")))
			got, probs, err := Load(files, tt.lookup)
			if err != nil {
				t.Fatalf("Load(%q): %v", files, err)
			}
			for i := range got {
				got[i].File = filepath.Base(got[i].File) // the fixtures' place is not the point
			}
			if !reflect.DeepEqual(got, tt.servers) {
				t.Errorf("Load(%q) servers:\ngot  %+v\nwant %+v", files, got, tt.servers)
			}
			var msgs []string
			for _, p := range probs {
				p.File = filepath.Base(p.File)
				msgs = append(msgs, p.String())
			}
			if !slices.Equal(msgs, tt.problems) {
				t.Errorf("Load(%q) problems:\ngot  %q\nwant %q", files, msgs, tt.problems)
			}
		})
	}
}

func TestLoadParseError(t *testing.T) {
	file := filepath.Join("testdata", "broken", "project", ".mcp.json")
	_, _, err := Load([]string{file}, env())
	want := file + `:3:26: unexpected '}', want a quoted key`
	if err == nil || err.Error() != want {
		t.Errorf("Load(%s) error = %v, want %s", file, err, want)
	}
}

func TestLoadMalformedEntries(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".mcp.json")
	doc := `{"mcpServers": {
		"list": [],
		"nothing": {},
		"numargs": {"command": "x", "args": [1]},
		"ws": {"type": "websocket", "url": "ws://x"},
		"bare": {"command": "mcpshim", "args": ["--name", "bare", "--"]},
		"ok": {"command": "x", "env": {"N": 1}}
	}}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got, probs, err := Load([]string{file}, env())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "ok" {
		t.Errorf("Load(%s) servers = %+v, want only ok", doc, got)
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Server+": "+p.Msg)
	}
	want := []string{
		"list: the entry is not an object",
		"nothing: the entry has neither command nor url",
		"numargs: args[0] is not a string",
		`ws: unknown type "websocket"`,
		`bare: the entry runs mcpshim with nothing after "--"`,
		"ok: env.N is not a string",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("Load(%s) problems:\ngot  %q\nwant %q", doc, msgs, want)
	}
}

func TestSplitShim(t *testing.T) {
	tests := []struct {
		command    string
		args       []string
		shim, real []string
		ok         bool
	}{
		{"/usr/local/bin/mcpshim", []string{"--name", "a", "--", "npx", "-y", "x"}, []string{"--name", "a"}, []string{"npx", "-y", "x"}, true},
		{"mcpshim", []string{"--", "srv"}, []string{}, []string{"srv"}, true},
		{"mcpshim", []string{"ledger"}, nil, nil, false},
		{"/opt/mcpshim-dev", []string{"--", "srv"}, nil, nil, false},
		{"npx", []string{"--", "mcpshim"}, nil, nil, false},
		// Without "--", as the shim reads it since a launcher may strip it:
		// the server's command is the first word no flag takes as its value.
		{"mcpshim", []string{"--name", "x", "npx", "-y", "srv"}, []string{"--name", "x"}, []string{"npx", "-y", "srv"}, true},
		{"mcpshim", []string{"--quiet", "--name=x", "-max-observe", "65536", "uvx", "--from", "a", "b"},
			[]string{"--quiet", "--name=x", "-max-observe", "65536"}, []string{"uvx", "--from", "a", "b"}, true},
		{"mcpshim", []string{"--name", "--", "srv"}, []string{"--name", "--"}, []string{"srv"}, true}, // "--" is --name's value
		{"mcpshim", []string{"fixture", "healthy"}, nil, nil, false},                                  // a subcommand
		{"mcpshim", []string{"--name", "x", "--url", "https://h.example/mcp"}, nil, nil, false},       // flags only: a --url bridge
		{"mcpshim", []string{"--name"}, nil, nil, false},
	}
	for _, tt := range tests {
		shim, real, ok := SplitShim(tt.command, tt.args)
		if ok != tt.ok || !slices.Equal(shim, tt.shim) || !slices.Equal(real, tt.real) {
			t.Errorf("SplitShim(%q, %q) = %q, %q, %v; want %q, %q, %v", tt.command, tt.args, shim, real, ok, tt.shim, tt.real, tt.ok)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in    string
		jsonc bool
		err   string // "" for a good document
	}{
		{`{"a": "\u00e9\ud83d\ude00\n\"x\""}`, false, ""},
		{"\xEF\xBB\xBF{}", false, ""},
		{`{"a": [1, -2.5e+3, true, false, null]}`, false, ""},
		{"{\n  // note\n  \"a\": 1\n}", false, "f:2:3: comment: Claude Code reads this file as strict JSON, which has no comments; remove it"},
		{"{\"a\": 1 /* x */}", false, "f:1:9: comment: Claude Code reads this file as strict JSON, which has no comments; remove it"},
		{"{\n  // note\n  \"a\": [1,],\n}", true, ""},
		{"{\"a\": 1 /* open", true, "f:1:9: unterminated comment"},
		{`{"a": [1,]}`, false, "f:1:10: unexpected ']', want a value"},
		{"{\n\"é\": 01}", false, "f:2:6: invalid number"},
		{`{"a": "x`, false, "f:1:7: unterminated string"},
		{`{"a": "\q"}`, false, `f:1:8: invalid escape \q in string`},
		{`{"a" 1}`, false, `f:1:6: unexpected '1' after key "a", want ':'`},
		{`{} {}`, false, "f:1:4: unexpected '{' after the top-level value"},
		{``, false, "f:1:1: unexpected end of file, want a value"},
		{"{\"a\": \"\t\"}", false, `f:1:8: control character '\t' in string`},
	}
	for _, tt := range tests {
		_, err := parse("f", []byte(tt.in), tt.jsonc, "Claude Code")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.err {
			t.Errorf("parse(%q, jsonc=%v) error = %q, want %q", tt.in, tt.jsonc, got, tt.err)
		}
	}
	v, err := parse("f", []byte(`{"a": "\u00e9\ud83d\ude00\n\"x\"", "a": "last"}`), false, "Claude Code")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.members[0].val.str, "é😀\n\"x\""; got != want {
		t.Errorf("decoded string = %q, want %q", got, want)
	}
	if got := v.get("a").str; got != "last" {
		t.Errorf(`get("a") with a repeated key = %q, want "last"`, got)
	}
}

// TestForProject: in dir, the project's own ~/.claude.json entry comes
// first, another project's entries and problems are left out.
func TestForProject(t *testing.T) {
	servers := []Server{{Name: "user"}, {Name: "mine", Project: "/p"}, {Name: "theirs", Project: "/q"}}
	problems := []Problem{{Server: "a", Project: "/p", Msg: "x"}, {Server: "b", Project: "/q", Msg: "y"}, {Server: "c", Msg: "z"}}
	gotS, gotP := ForProject(servers, problems, "/p")
	var names, texts []string
	for _, s := range gotS {
		names = append(names, s.Name)
	}
	for _, p := range gotP {
		texts = append(texts, p.Text())
	}
	if want := []string{"mine", "user"}; !slices.Equal(names, want) {
		t.Errorf("ForProject servers = %q, want %q", names, want)
	}
	if want := []string{"project /p: x", "z"}; !slices.Equal(texts, want) {
		t.Errorf("ForProject problems = %q, want %q", texts, want)
	}
}

// TestCandidatesWindows: every client's Windows path, as its documentation
// gives it, with %APPDATA% and %USERPROFILE% set as Windows sets them.
func TestCandidatesWindows(t *testing.T) {
	env := func(k string) string { return map[string]string{"APPDATA": `C:/Users/dev/AppData/Roaming`}[k] }
	got := slashed(Candidates("C:/work/p", "C:/Users/dev", "windows", env))
	for _, want := range []string{
		"C:/Users/dev/AppData/Roaming/Claude/claude_desktop_config.json", // Claude Desktop
		"C:/Users/dev/.claude.json",                                      // Claude Code
		"C:/work/p/.mcp.json",
		"C:/Users/dev/.cursor/mcp.json", // Cursor
		"C:/work/p/.cursor/mcp.json",
		"C:/Users/dev/AppData/Roaming/Code/User/mcp.json", // VS Code
		"C:/work/p/.vscode/mcp.json",
		"C:/Users/dev/.codeium/windsurf/mcp_config.json", // Windsurf
		"C:/Users/dev/.codex/config.toml",                // Codex
		"C:/Users/dev/.gemini/settings.json",             // Gemini CLI
		"C:/Users/dev/AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
		"C:/Users/dev/AppData/Roaming/Zed/settings.json",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Candidates on windows = %q, want it to hold %q", got, want)
		}
	}
}
