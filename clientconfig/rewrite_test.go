package clientconfig

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const shim = "/opt/bin/mcpshim"

var flags = []string{"--ledger", "/var/log/mcp"}

func TestWrapLayouts(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []struct {
		name, file, in, want string
	}{
		{
			name: "compact",
			file: ".mcp.json",
			in:   `{"mcpServers":{"fs":{"command":"npx","args":["-y","@mcp/fs","/tmp"]},"web":{"url":"https://x"}}}`,
			want: `{"mcpServers":{"fs":{"command":"/opt/bin/mcpshim","args":["--name","fs","--ledger","/var/log/mcp","--","npx","-y","@mcp/fs","/tmp"]},"web":{"url":"https://x"}}}`,
		},
		{
			name: "one argument per line",
			file: ".mcp.json",
			in: `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "@mcp/fs"
      ]
    }
  }
}
`,
			want: `{
  "mcpServers": {
    "fs": {
      "command": "/opt/bin/mcpshim",
      "args": [
        "--name",
        "fs",
        "--ledger",
        "/var/log/mcp",
        "--",
        "npx",
        "-y",
        "@mcp/fs"
      ]
    }
  }
}
`,
		},
		{
			name: "inline args in an indented file",
			file: ".mcp.json",
			in: `{
    "mcpServers": {
        "fs": { "command": "npx", "args": ["-y", "@mcp/fs"] },
        "one": { "command": "srv", "args": ["--stdio"] }
    }
}`,
			want: `{
    "mcpServers": {
        "fs": { "command": "/opt/bin/mcpshim", "args": ["--name", "fs", "--ledger", "/var/log/mcp", "--", "npx", "-y", "@mcp/fs"] },
        "one": { "command": "/opt/bin/mcpshim", "args": ["--name", "one", "--ledger", "/var/log/mcp", "--", "srv", "--stdio"] }
    }
}`,
		},
		{
			name: "CRLF and tabs",
			file: "claude_desktop_config.json",
			in:   crlf("{\n\t\"mcpServers\": {\n\t\t\"fs\": {\n\t\t\t\"command\": \"npx\",\n\t\t\t\"args\": [\n\t\t\t\t\"-y\"\n\t\t\t]\n\t\t}\n\t}\n}\n"),
			want: crlf("{\n\t\"mcpServers\": {\n\t\t\"fs\": {\n\t\t\t\"command\": \"/opt/bin/mcpshim\",\n\t\t\t\"args\": [\n\t\t\t\t\"--name\",\n\t\t\t\t\"fs\",\n\t\t\t\t\"--ledger\",\n\t\t\t\t\"/var/log/mcp\",\n\t\t\t\t\"--\",\n\t\t\t\t\"npx\",\n\t\t\t\t\"-y\"\n\t\t\t]\n\t\t}\n\t}\n}\n"),
		},
		{
			name: "unicode and escapes",
			file: ".mcp.json",
			in:   `{"mcpServers": {"ファイル": {"command": "/Users/jos\u00e9/bin/sërver", "args": ["--root", "/données/\"q\""]}}}`,
			want: `{"mcpServers": {"ファイル": {"command": "/opt/bin/mcpshim", "args": ["--name", "ファイル", "--ledger", "/var/log/mcp", "--", "/Users/jos\u00e9/bin/sërver", "--root", "/données/\"q\""]}}}`,
		},
		{
			name: "unknown keys, env, cwd, args before command",
			file: ".mcp.json",
			in: `{
  "$schema": "x",
  "mcpServers": {
    "db": {
      "type": "stdio",
      "args": ["serve"],
      "x-note": {"keep": [1, 2]},
      "command": "db-mcp",
      "env": {"DB_URL": "${DB_URL}"},
      "cwd": "/srv"
    }
  },
  "zz": null
}`,
			want: `{
  "$schema": "x",
  "mcpServers": {
    "db": {
      "type": "stdio",
      "args": ["--name", "db", "--ledger", "/var/log/mcp", "--", "db-mcp", "serve"],
      "x-note": {"keep": [1, 2]},
      "command": "/opt/bin/mcpshim",
      "env": {"DB_URL": "${DB_URL}"},
      "cwd": "/srv"
    }
  },
  "zz": null
}`,
		},
		{
			name: "no args, indented",
			file: ".mcp.json",
			in: `{
  "mcpServers": {
    "mem": {
      "command": "memory-server"
    },
    "env-after": {
      "command": "srv",
      "env": {}
    }
  }
}`,
			want: `{
  "mcpServers": {
    "mem": {
      "command": "/opt/bin/mcpshim",
      "args": [ "--name", "mem", "--ledger", "/var/log/mcp", "--", "memory-server" ]
    },
    "env-after": {
      "command": "/opt/bin/mcpshim",
      "args": [ "--name", "env-after", "--ledger", "/var/log/mcp", "--", "srv" ],
      "env": {}
    }
  }
}`,
		},
		{
			name: "no args, compact",
			file: ".mcp.json",
			in:   `{"mcpServers":{"mem":{"command":"memory-server"}}}`,
			want: `{"mcpServers":{"mem":{"command":"/opt/bin/mcpshim","args":[ "--name","mem","--ledger","/var/log/mcp","--","memory-server" ]}}}`,
		},
		{
			name: "claude.json projects",
			file: "/home/dev/.claude.json",
			in:   `{"mcpServers": {"a": {"command": "x"}}, "projects": {"/p": {"mcpServers": {"b": {"command": "y", "args": ["1"]}}}}}`,
			want: `{"mcpServers": {"a": {"command": "/opt/bin/mcpshim", "args": [ "--name", "a", "--ledger", "/var/log/mcp", "--", "x" ]}}, "projects": {"/p": {"mcpServers": {"b": {"command": "/opt/bin/mcpshim", "args": ["--name", "b", "--ledger", "/var/log/mcp", "--", "y", "1"]}}}}}`,
		},
		{
			name: "vscode servers",
			file: "/w/.vscode/mcp.json",
			in:   `{"inputs": [], "servers": {"gh": {"type": "http", "url": "https://x"}, "fs": {"type": "stdio", "command": "npx", "args": ["${workspaceFolder}"]}}}`,
			want: `{"inputs": [], "servers": {"gh": {"type": "http", "url": "https://x"}, "fs": {"type": "stdio", "command": "/opt/bin/mcpshim", "args": ["--name", "fs", "--ledger", "/var/log/mcp", "--", "npx", "${workspaceFolder}"]}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Wrap(tt.file, []byte(tt.in), shim, flags, Scope{})
			if err != nil {
				t.Fatalf("Wrap(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Fatalf("Wrap(%s):\ngot  %s\nwant %s", tt.in, got, tt.want)
			}
			again, _, err := Wrap(tt.file, got, shim, []string{"--other"}, Scope{})
			if err != nil || string(again) != tt.want {
				t.Errorf("Wrap of the wrapped file = %s, %v; want it unchanged", again, err)
			}
			back, _, err := Unwrap(tt.file, got, Scope{})
			if err != nil || string(back) != tt.in {
				t.Errorf("Unwrap(%s):\ngot  %s, %v\nwant %s", got, back, err, tt.in)
			}
		})
	}
}

func TestWrapEntries(t *testing.T) {
	in := `{"mcpServers": {
		"fs": {"command": "npx"},
		"done": {"command": "/usr/bin/mcpshim", "args": ["--", "srv"]},
		"web": {"type": "sse", "url": "https://x"},
		"url-only": {"url": "https://y"},
		"bad": {"command": ["npx"]},
		"badargs": {"command": "x", "args": "y"},
		"list": []
	}}`
	got, entries, err := Wrap(".mcp.json", []byte(in), shim, nil, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Server: "fs", Result: Rewritten},
		{Server: "done", Result: Unchanged},
		{Server: "web", Result: SkippedRemote},
		{Server: "url-only", Result: SkippedRemote},
		{Server: "bad", Result: SkippedBroken, Reason: "command is missing or not a string"},
		{Server: "badargs", Result: SkippedBroken, Reason: "args is not a list"},
		{Server: "list", Result: SkippedBroken, Reason: "the entry is not an object"},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("Wrap(%s) entries:\ngot  %+v\nwant %+v", in, entries, want)
	}
	if wantOut := strings.Replace(in, `"fs": {"command": "npx"}`, `"fs": {"command": "/opt/bin/mcpshim", "args": [ "--name", "fs", "--", "npx" ]}`, 1); string(got) != wantOut {
		t.Errorf("Wrap(%s) =\n%s\nwant\n%s", in, got, wantOut)
	}

	_, entries, err = Wrap(".mcp.json", []byte(in), shim, nil, Scope{Servers: []string{"fs", "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{{Server: "fs", Result: Rewritten}, {Server: "web", Result: SkippedRemote}}; !reflect.DeepEqual(entries, want) {
		t.Errorf("Wrap(only fs, web) entries = %+v, want %+v", entries, want)
	}
}

func TestUnwrapByHand(t *testing.T) {
	tests := []struct{ in, want string }{
		{
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["--name", "a", "--", "npx", "-y", "pkg"]}}}`,
			`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "pkg"]}}}`,
		},
		{
			"{\"mcpServers\": {\"a\": {\n  \"args\": [\n    \"--\",\n    \"srv\"\n  ],\n  \"command\": \"/home/me/go/bin/mcpshim\",\n  \"env\": {}\n}}}",
			"{\"mcpServers\": {\"a\": {\n  \"command\": \"srv\",\n  \"env\": {}\n}}}",
		},
		{
			`{"mcpServers": {"a": {"command": "mcpshim", "env": {}, "args": ["--", "srv"]}}}`,
			`{"mcpServers": {"a": {"command": "srv", "env": {}, "args": []}}}`,
		},
		{ // an args list Wrap did not add is kept, emptied
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["--", "srv"], "env": {}}}}`,
			`{"mcpServers": {"a": {"command": "srv", "args": [], "env": {}}}}`,
		},
		{ // one it added ("[ ... ]") goes with its key
			`{"mcpServers": {"a": {"command": "mcpshim", "args": [ "--", "srv" ], "env": {}}}}`,
			`{"mcpServers": {"a": {"command": "srv", "env": {}}}}`,
		},
		{ // mcpshim running a subcommand is mcpshim itself, not a wrapped server
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["ledger"]}}}`,
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["ledger"]}}}`,
		},
		{ // a server after the flags without "--", which the shim runs
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["--name", "x", "npx", "-y", "srv"]}}}`,
			`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "srv"]}}}`,
		},
		{
			`{"mcpServers": {"a": {"command": "mcpshim", "args": ["--quiet", "srv"]}}}`,
			`{"mcpServers": {"a": {"command": "srv", "args": []}}}`,
		},
	}
	for _, tt := range tests {
		got, _, err := Unwrap(".mcp.json", []byte(tt.in), Scope{})
		if err != nil || string(got) != tt.want {
			t.Errorf("Unwrap(%s) =\n%s, %v\nwant\n%s", tt.in, got, err, tt.want)
		}
	}
	in := `{"mcpServers": {"a": {"command": "mcpshim", "args": ["--name", "a", "--"]}, "b": {"command": "srv"}}}`
	got, entries, err := Unwrap(".mcp.json", []byte(in), Scope{})
	if err != nil || string(got) != in {
		t.Errorf("Unwrap(%s) = %s, %v; want it unchanged", in, got, err)
	}
	want := []Entry{{Server: "a", Result: SkippedBroken, Reason: `nothing after "--" to restore`}, {Server: "b", Result: Unchanged}}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("Unwrap(%s) entries = %+v, want %+v", in, entries, want)
	}
}

func TestWrapRefuses(t *testing.T) {
	tests := []struct{ file, in, err string }{
		{".mcp.json", "{\n  // mine\n  \"mcpServers\": {}\n}", ".mcp.json:2:3: comment: Claude Code reads this file as strict JSON, which has no comments; remove it"},
		{"/w/.cursor/mcp.json", "{\"mcpServers\": {} /* VS Code would allow this */}", "/w/.cursor/mcp.json:1:19: comment: Cursor reads this file as strict JSON, which has no comments; remove it"},
		{"/w/.gemini/settings.json", "{\"mcpServers\": {}, // comments pass\n}", "/w/.gemini/settings.json:2:1: unexpected '}', want a quoted key"},
		{"/w/config.toml", "[mcp_servers.a]\ncommand = \"x\"\ncommand = \"y\"\n", "/w/config.toml:3:15: Key 'mcp_servers.a.command' has already been defined."},
		{".mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}", ".mcp.json:1:39: unexpected end of file in object, want ',' or '}'"},
		{".mcp.json", "[]", ".mcp.json:1:1: the top-level value is not an object"},
	}
	for _, tt := range tests {
		for _, unwrap := range []bool{false, true} {
			var err error
			if unwrap {
				_, _, err = Unwrap(tt.file, []byte(tt.in), Scope{})
			} else {
				_, _, err = Wrap(tt.file, []byte(tt.in), shim, nil, Scope{})
			}
			if err == nil || err.Error() != tt.err {
				t.Errorf("rewrite(unwrap=%v, %s, %q) error = %v, want %s", unwrap, tt.file, tt.in, err, tt.err)
			}
		}
	}
}

func TestWrapThenLoad(t *testing.T) {
	in := `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "${PKG:-@mcp/fs}"]}}}`
	out, _, err := Wrap(".mcp.json", []byte(in), shim, flags, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	doc, d, err := readDoc(".mcp.json", out)
	if err != nil {
		t.Fatal(err)
	}
	x := &expander{d: d, lookup: env()}
	s, probs := x.server(entries(".mcp.json", d, doc)[0])
	if !s.Wrapped || s.Command != "npx" || !slices.Equal(s.Args, []string{"-y", "@mcp/fs"}) ||
		!slices.Equal(s.ShimArgs, []string{"--name", "fs", "--ledger", "/var/log/mcp"}) || len(probs) > 0 {
		t.Errorf("the wrapped entry %s reads as %+v, %q; want npx -y @mcp/fs behind mcpshim", out, s, probs)
	}
}

// TestWrapWindows: a Windows config (CRLF, backslashes, npx.cmd, cmd /c)
// wrapped with the shim's absolute Windows path, escaped as JSON and TOML
// need, reads back as the same server behind mcpshim.exe, and unwrap gives
// the original bytes.
func TestWrapWindows(t *testing.T) {
	const winShim = `C:\Program Files\mcpshim\mcpshim.exe`
	winFlags := []string{"--ledger", `C:\Users\dev\AppData\Local\mcpshim`}
	tests := []struct {
		file, in string
		command  string
		args     []string
	}{
		{"claude_desktop_config.json", "{\r\n  \"mcpServers\": {\r\n    \"fs\": {\r\n      \"command\": \"npx.cmd\",\r\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"C:\\\\Users\\\\dev\\\\Documents\"]\r\n    }\r\n  }\r\n}\r\n",
			"npx.cmd", []string{"-y", "@modelcontextprotocol/server-filesystem", `C:\Users\dev\Documents`}},
		{".mcp.json", "{\r\n  \"mcpServers\": {\r\n    \"fs\": {\"command\": \"cmd\", \"args\": [\"/c\", \"npx\", \"-y\", \"@acme/server\"]}\r\n  }\r\n}\r\n",
			"cmd", []string{"/c", "npx", "-y", "@acme/server"}},
		{filepath.Join(".codex", "config.toml"), "[mcp_servers.fs]\r\ncommand = 'C:\\Tools\\fs-server.exe'\r\nargs = [\"--root\", \"D:\\\\data\"]\r\n",
			`C:\Tools\fs-server.exe`, []string{"--root", `D:\data`}},
	}
	for _, tt := range tests {
		out, _, err := Wrap(tt.file, []byte(tt.in), winShim, winFlags, Scope{})
		if err != nil {
			t.Fatalf("Wrap(%s): %v", tt.file, err)
		}
		if strings.Contains(strings.ReplaceAll(string(out), "\r\n", ""), "\n") {
			t.Errorf("Wrap(%s) wrote a bare LF into a CRLF file:\n%q", tt.file, out)
		}
		doc, d, err := readDoc(tt.file, out)
		if err != nil {
			t.Fatalf("the wrapped %s does not parse: %v\n%s", tt.file, err, out)
		}
		x := &expander{d: d, lookup: env()}
		s, _ := x.server(entries(tt.file, d, doc)[0])
		cmd, _, _ := stdio(entries(tt.file, d, doc)[0].obj)
		if !s.Wrapped || s.Command != tt.command || !slices.Equal(s.Args, tt.args) || !slices.Equal(s.ShimArgs, append([]string{"--name", "fs"}, winFlags...)) || cmd.str != winShim {
			t.Errorf("the wrapped %s reads as command %q, %+v; want %s in front of %s %q\n%s", tt.file, cmd.str, s, winShim, tt.command, tt.args, out)
		}
		back, _, err := Unwrap(tt.file, out, Scope{})
		if err != nil || string(back) != tt.in {
			t.Errorf("Unwrap(%s) = %q, %v; want the original %q", tt.file, back, err, tt.in)
		}
	}
}

func TestIsShim(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/mcpshim": true, `C:\Tools\mcpshim.exe`: true, `C:\Tools\MCPSHIM.EXE`: true, "mcpshim": true,
		"mcpshim.cmd": false, "/usr/bin/mcpshimx": false, `C:\mcpshim\npx.cmd`: false,
	} {
		if got := isShim(cmd); got != want {
			t.Errorf("isShim(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestUnwrapRestoresEmptyArgsAndComments: Unwrap gives back the bytes Wrap
// was given when args was an empty array in any spelling, and when a comment
// stood before the first argument.
func TestUnwrapRestoresEmptyArgsAndComments(t *testing.T) {
	for _, tt := range []struct{ file, in string }{
		{".mcp.json", `{"mcpServers": {"a": {"command": "srv", "args": []}}}`},
		{".mcp.json", `{"mcpServers": {"a": {"command": "srv", "args" : [ ]}}}`},
		{".mcp.json", "{\"mcpServers\": {\"a\": {\n  \"command\": \"srv\",\n  \"args\": [\n  ],\n  \"env\": {}\n}}}"},
		{".mcp.json", `{"mcpServers": {"a": {"command": "srv"}}}`},
		{".vscode/mcp.json", `{"servers": {"a": {"command": "srv", "args": [/*x*/]}}}`},
		{".vscode/mcp.json", `{"servers": {"a": {"command": "srv", "args": [ /*x*/ ]}}}`},
		{".vscode/mcp.json", `{"servers": {"a": {"command": "srv", "args": [/*c*/ "x", "y"]}}}`},
		{".vscode/mcp.json", "{\"servers\": {\"a\": {\"command\": \"srv\", \"args\": [\n    // the root\n    \"/tmp\",\n  ]}}}"},
		{".vscode/mcp.json", "{\"servers\": {\"a\": {\"command\": \"srv\", \"args\": [ // c\n  ]}}}"},
		{".codex/config.toml", "[mcp_servers.a]\ncommand = \"srv\"\nargs = []\n"},
		{".codex/config.toml", "[mcp_servers.a]\ncommand = \"srv\"\nargs = [ ]\nenabled = true\n"},
		{".codex/config.toml", "[mcp_servers.a]\ncommand = \"srv\"\n"},
	} {
		wrapped, _, err := Wrap(tt.file, []byte(tt.in), "/s/mcpshim", nil, Scope{})
		if err != nil || !strings.Contains(string(wrapped), `"--name"`) {
			t.Errorf("Wrap(%q) = %q, %v", tt.in, wrapped, err)
			continue
		}
		got, _, err := Unwrap(tt.file, wrapped, Scope{})
		if err != nil || string(got) != tt.in {
			t.Errorf("Unwrap(Wrap(%q)):\n got %q, %v\nwant the original; wrapped %q", tt.in, got, err, wrapped)
		}
	}
}
