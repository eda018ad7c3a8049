package clientconfig

import (
	"fmt"
	"os"
	"path/filepath"
)

// entry is one server definition inside a parsed document.
type entry struct {
	name    string
	project string
	obj     *value
}

// entries lists the server definitions of doc in document order: the
// top-level section, then, in ~/.claude.json, each project's section.
func entries(file string, d dialect, doc *value) []entry {
	var out []entry
	add := func(project string, servers *value) {
		if servers == nil || servers.kind != kindObject {
			return
		}
		for _, m := range servers.members {
			out = append(out, entry{name: m.key, project: project, obj: m.val})
		}
	}
	add("", doc.get(d.section()))
	if filepath.Base(file) == ".claude.json" {
		if projects := doc.get("projects"); projects != nil && projects.kind == kindObject {
			for _, m := range projects.members {
				add(m.key, m.val.get("mcpServers"))
			}
		}
	}
	return out
}

// readDoc parses file as its client does: TOML for Codex, JSON with
// comments where the client allows them, strict JSON otherwise.
func readDoc(file string, data []byte) (*value, dialect, error) {
	d := dialectOf(file, nil)
	var doc *value
	var err error
	if d == codex {
		doc, err = parseTOML(file, data)
	} else {
		doc, err = parseWith(file, data, d.comments(), d.commas(), clientName[d])
	}
	if err != nil {
		return nil, 0, err
	}
	if doc.kind != kindObject {
		line, col := position(data, doc.start)
		return nil, 0, &SyntaxError{File: file, Line: line, Col: col, Msg: "the top-level value is not an object"}
	}
	return doc, dialectOf(file, doc), nil
}

// Load reads files and expands their variables with lookup, by the rules of
// the client each file belongs to:
//   - Claude Code: ${VAR} and ${VAR:-default}, anywhere inside command, args,
//     env values, cwd, url and header values;
//   - VS Code and Cursor: ${env:VAR}, ${workspaceFolder},
//     ${workspaceFolderBasename}, ${userHome}, ${pathSeparator};
//   - Claude Desktop expands nothing, so any ${...} is a Problem.
//
// A variable that cannot be resolved stays as written and is a Problem naming
// it and its server; it is never silently made empty. An entry too malformed
// to use is a Problem and left out. The error is for a file that cannot be
// read or parsed, with file:line:col.
func Load(files []string, lookup func(string) (string, bool)) ([]Server, []Problem, error) {
	var servers []Server
	var problems []Problem
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", file, err)
		}
		doc, d, err := readDoc(file, data)
		if err != nil {
			return nil, nil, err
		}
		x := &expander{d: d, lookup: lookup, workspace: workspace(file, d, lookup)}
		if d == windsurf {
			x.workspace = "" // Windsurf's file is per user
		}
		for _, e := range entries(file, d, doc) {
			s, msgs := x.server(e)
			s.File = file
			for _, m := range msgs {
				problems = append(problems, Problem{File: file, Server: e.name, Project: e.project, Msg: m})
			}
			if s.Type != "" {
				servers = append(servers, s)
			}
		}
	}
	return servers, problems, nil
}

// workspace is the folder ${workspaceFolder} means for file: the one holding
// .vscode or .cursor, unless that folder is home (a user-level config).
func workspace(file string, d dialect, lookup func(string) (string, bool)) string {
	if d != vsCode && d != cursor {
		return ""
	}
	dir := filepath.Dir(file)
	if b := filepath.Base(dir); b != ".vscode" && b != ".cursor" {
		return ""
	}
	ws, err := filepath.Abs(filepath.Dir(dir))
	if err != nil {
		return ""
	}
	if home, ok := lookup("HOME"); ok && filepath.Clean(home) == ws {
		return ""
	}
	return ws
}

// server builds e's Server. A Server with an empty Type is unusable; the
// messages say why.
func (x *expander) server(e entry) (Server, []string) {
	s := Server{Name: e.name, Project: e.project}
	obj := e.obj
	if obj.kind != kindObject {
		return Server{}, []string{"the entry is not an object"}
	}
	var probs []string
	str := func(field, label string) string {
		v := obj.get(field)
		if v == nil {
			return ""
		}
		if v.kind != kindString {
			probs = append(probs, label+" is not a string")
			return ""
		}
		out, p := x.expand(v.str)
		for _, m := range p {
			probs = append(probs, label+": "+m)
		}
		return out
	}
	strMap := func(field string) map[string]string {
		v := obj.get(field)
		if v == nil {
			return nil
		}
		if v.kind != kindObject {
			probs = append(probs, field+" is not an object")
			return nil
		}
		m := make(map[string]string, len(v.members))
		for _, mem := range v.members {
			if mem.val.kind != kindString {
				probs = append(probs, fmt.Sprintf("%s.%s is not a string", field, mem.key))
				continue
			}
			out, p := x.expand(mem.val.str)
			for _, msg := range p {
				probs = append(probs, fmt.Sprintf("%s.%s: %s", field, mem.key, msg))
			}
			m[mem.key] = out
		}
		return m
	}

	typ := ""
	if t := obj.get("type"); t != nil {
		if t.kind != kindString {
			return Server{}, []string{"type is not a string"}
		}
		typ = t.str
	}
	if v := obj.get("disabled"); v != nil && v.str == "true" {
		s.Disabled = true
	}
	if v := obj.get("enabled"); v != nil && v.str == "false" {
		s.Disabled = true
	}
	// Where each client puts a remote server's address.
	urlKey, headersKey := "url", "headers"
	switch {
	case x.d == windsurf && obj.get("serverUrl") != nil:
		urlKey = "serverUrl"
	case x.d == gemini && obj.get("httpUrl") != nil:
		urlKey, typ = "httpUrl", "http"
	case x.d == gemini && obj.get("url") != nil && obj.get("command") == nil:
		typ = "sse" // Gemini CLI's url is an SSE endpoint
	case x.d == codex:
		headersKey = "http_headers"
	}
	switch {
	case typ == "streamable-http" || typ == "streamableHttp":
		typ = "http"
	case typ == "" && obj.get("command") != nil:
		typ = "stdio"
	case typ == "" && obj.get(urlKey) != nil:
		typ = "http"
	case typ == "":
		return Server{}, []string{"the entry has neither command nor url"}
	case typ != "stdio" && typ != "http" && typ != "sse":
		return Server{}, []string{fmt.Sprintf("unknown type %q", typ)}
	}
	s.Type = typ

	if typ != "stdio" {
		s.URL = str(urlKey, urlKey)
		if s.URL == "" {
			probs = append(probs, "a "+typ+" entry needs a "+urlKey)
		}
		s.Headers = strMap(headersKey)
		return s, probs
	}
	if c := obj.get("command"); x.d == zed && c != nil && c.kind == kindObject {
		// Zed's older form: "command": {"path": ..., "args": [...], "env": {...}}.
		if c.get("path") == nil {
			return Server{}, append(probs, "command has no path")
		}
		in, p := x.server(entry{name: e.name, project: e.project, obj: zedCommand(obj, x.d)})
		in.Disabled = s.Disabled
		return in, append(probs, p...)
	}
	s.Command = str("command", "command")
	if s.Command == "" {
		return Server{}, append(probs, "a stdio entry needs a command")
	}
	if v := obj.get("args"); v != nil {
		if v.kind != kindArray {
			return Server{}, append(probs, "args is not a list")
		}
		for i, el := range v.elems {
			if el.kind != kindString {
				return Server{}, append(probs, fmt.Sprintf("args[%d] is not a string", i))
			}
			out, p := x.expand(el.str)
			for _, m := range p {
				probs = append(probs, fmt.Sprintf("args[%d]: %s", i, m))
			}
			s.Args = append(s.Args, out)
		}
	}
	s.Env = strMap("env")
	s.Cwd = str("cwd", "cwd")
	if shim, real, ok := SplitShim(s.Command, s.Args); ok {
		if len(real) == 0 {
			return Server{}, append(probs, `the entry runs mcpshim with nothing after "--"`)
		}
		s.Wrapped, s.ShimArgs, s.Command, s.Args = true, shim, real[0], real[1:]
	} else if remoteWrapped(s.Command, s.Args) {
		s.Wrapped, s.ShimArgs = true, s.Args // the bridge is the server: it runs as written
	}
	return s, probs
}
