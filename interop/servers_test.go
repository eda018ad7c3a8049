//go:build !windows

package interop

import (
	"os"
	"path/filepath"
	"testing"
)

// server is one MCP server of the matrix.
type server struct {
	name   string
	needs  string // "node", "python3" or "" (built in TestMain)
	modern bool   // answers server/discover (2026-07-28); the rest speak initialize only
	// start returns what a pair runs, both with and without the shim: its
	// state (directories, files) lives in dir, shared by the two runs.
	start func(t *testing.T, dir string) serverRun
}

// serverRun is how to launch a server and a deterministic tool call to make.
type serverRun struct {
	argv []string // absolute paths: no npx, no PATH lookup
	env  []string // added to the client's environment, reaching the server through the shim
	call toolCall
	root string // a directory a client with roots offers; "" for none
}

type toolCall struct {
	name string
	args map[string]any
}

var echoCall = toolCall{"echo", map[string]any{"message": "hello through the shim"}}

func npmServer(pkg string) string {
	return filepath.Join(bins.modules, "@modelcontextprotocol", pkg, "dist", "index.js")
}

var servers = []server{
	{name: "everything", needs: "node", start: func(t *testing.T, dir string) serverRun {
		return serverRun{argv: []string{bins.node, npmServer("server-everything"), "stdio"}, call: echoCall}
	}},
	{name: "filesystem", needs: "node", start: func(t *testing.T, dir string) serverRun {
		root := filepath.Join(dir, "root")
		file := filepath.Join(root, "hello.txt")
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte("hello from the filesystem server\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return serverRun{
			argv: []string{bins.node, npmServer("server-filesystem"), root},
			call: toolCall{"read_text_file", map[string]any{"path": file}},
			root: root,
		}
	}},
	{name: "memory", needs: "node", start: func(t *testing.T, dir string) serverRun {
		// read_graph only reads: both runs see the same (absent, so empty) graph.
		return serverRun{
			argv: []string{bins.node, npmServer("server-memory")},
			env:  []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")},
			call: toolCall{"read_graph", map[string]any{}},
		}
	}},
	{name: "gosdk", modern: true, start: func(t *testing.T, dir string) serverRun {
		return serverRun{argv: []string{bins.gosdkServer}, call: echoCall}
	}},
	{name: "mcpgo", modern: true, start: func(t *testing.T, dir string) serverRun {
		return serverRun{argv: []string{bins.mcpgoServer}, call: echoCall}
	}},
	{name: "python", needs: "python3", start: func(t *testing.T, dir string) serverRun {
		script, err := filepath.Abs(filepath.Join("testdata", "pyserver.py"))
		if err != nil {
			t.Fatal(err)
		}
		return serverRun{argv: []string{bins.python, script}, call: echoCall}
	}},
}
