package clientconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Result is what a rewrite did with one entry.
type Result int

const (
	Rewritten      Result = iota // wrapped by Wrap, unwrapped by Unwrap
	Unchanged                    // already wrapped (Wrap) or not wrapped (Unwrap)
	SkippedRemote                // a url entry: there is no process to put mcpshim in front of
	SkippedBroken                // command or args unusable as written; Reason says why
	SkippedProject               // another project's entry in ~/.claude.json, outside the Scope
)

// Scope picks the entries a rewrite touches.
type Scope struct {
	Servers []string // entry names; every entry when empty
	// Project is the ~/.claude.json projects key whose entries count besides
	// the user's own; the other projects' are SkippedProject. "" is every
	// project.
	Project string
}

func (sc Scope) skipProject(project string) bool {
	return project != "" && sc.Project != "" && !SameProject(project, sc.Project)
}

// Entry is one server entry a rewrite looked at.
type Entry struct {
	Server  string
	Project string // the projects key in ~/.claude.json, "" elsewhere
	Result  Result
	Reason  string // why it was skipped; for an Unwrap, "wrapped by hand" when wrap did not write it
}

// splice replaces data[start:end] with text.
type splice struct {
	start, end int
	text       []byte
}

// Wrap returns data with each stdio entry in sc rewritten to run shim, an absolute path:
//
//	"command": shim, "args": ["--name", NAME, flags..., "--", COMMAND, ARGS...]
//
// Only the bytes of the command value and the args value change, so key
// order, whitespace, line endings and unknown keys survive, and Unwrap
// restores the original bytes. An args member is added when there was none,
// written "[ ... ]" with a space before its "]": wrap's items inserted into
// an existing array never leave one there, so Unwrap can tell an added args
// (removed with its key) from an emptied "args": [] (kept).
// Wrapped entries are left as they are. Comments and trailing commas, where
// the client allows them, are kept where they are.
func Wrap(file string, data []byte, shim string, flags []string, sc Scope) ([]byte, []Entry, error) {
	return rewriteStdio(file, data, sc, func(obj *value, name string, d dialect, cmd, args *value) ([]splice, Result, string) {
		if _, _, ok := splitShim(cmd.str, strs(args)); ok || remoteWrapped(cmd.str, strs(args)) {
			return nil, Unchanged, ""
		}
		items := [][]byte{quote("--name"), quote(name)}
		for _, f := range flags {
			items = append(items, quote(f))
		}
		items = append(items, quote("--"), data[cmd.start:cmd.end])
		edits := []splice{{cmd.start, cmd.end, quote(shim)}}
		if args == nil && d == codex { // a line of its own after command's
			eol, nl := lineEnd(data, cmd.end), "\n"
			if bytes.Contains(data, []byte("\r\n")) {
				nl = "\r\n"
			}
			text := fmt.Appendf(nil, "args = [ %s ]%s", join(items, " "), nl)
			if eol == len(data) {
				text = append([]byte(nl), text[:len(text)-len(nl)]...)
			} else {
				eol++
			}
			return append(edits, splice{eol, eol, text}), Rewritten, ""
		}
		colon := spaceBefore(data, cmd.start)
		if args == nil {
			lead := spaceBefore(data, obj.members[obj.index("command")].keyStart)
			if lead == "" { // {"command": ...} on one line: space like the colon does
				lead = inlineSep(colon)
			}
			text := fmt.Appendf(nil, ",%s\"args\":%s[ %s ]", lead, colon, join(items, inlineSep(colon)))
			return append(edits, splice{cmd.end, cmd.end, text}), Rewritten, ""
		}
		return append(edits, arrayPrefix(data, args, items, inlineSep(spaceBefore(data, args.start)))), Rewritten, ""
	})
}

// Unwrap returns data with each entry in sc that runs mcpshim restored to the server after "--": the exact bytes Wrap
// replaced, and a sensible layout for an entry wrapped by hand. An args list
// left empty is removed with its key when Wrap added it (its "[ ... ]"), and
// kept as it was ("[]", "[ ]", "[/*x*/]") otherwise.
func Unwrap(file string, data []byte, sc Scope) ([]byte, []Entry, error) {
	return rewriteStdio(file, data, sc, func(obj *value, name string, d dialect, cmd, args *value) ([]splice, Result, string) {
		list := strs(args)
		end, at, ok := splitShim(cmd.str, list)
		if !ok {
			return nil, Unchanged, ""
		}
		if at == len(list) {
			return nil, SkippedBroken, `nothing after "--" to restore`
		}
		real := list[at:]
		how := ""
		if end < 2 || at == end || list[0] != "--name" || list[1] != name {
			how = "wrapped by hand" // wrap always writes --name NAME first, and "--"
		}
		server := args.elems[at]
		edits := []splice{{cmd.start, cmd.end, data[server.start:server.end]}}
		if len(real) > 1 {
			// Up to the comma after the server's command and the space Wrap
			// put after it: a comment before the first argument stays.
			return append(edits, splice{args.elems[0].start, afterComma(data, server.end), nil}), Rewritten, how
		}
		last := args.elems[len(args.elems)-1]
		if tail := data[last.end : args.end-1]; len(tail) == 0 || len(bytes.TrimLeft(tail, " \t\r\n")) > 0 {
			// Not Wrap's "[ ... ]": the array was there, empty, before.
			return append(edits, splice{args.elems[0].start, last.end, nil}), Rewritten, how
		}
		i := obj.index("args")
		if d == codex { // the whole args line goes
			from := bytes.LastIndexByte(data[:obj.members[i].keyStart], '\n') + 1
			to := lineEnd(data, args.end) + 1
			if to > len(data) { // the last line: its newline is the one before it
				to, from = len(data), max(from-1, 0)
				if from > 0 && data[from-1] == '\r' {
					from--
				}
			}
			return append(edits, splice{from, to, nil}), Rewritten, how
		}
		if i > 0 {
			return append(edits, splice{obj.members[i-1].val.end, args.end, nil}), Rewritten, how
		}
		return append(edits, splice{obj.members[0].keyStart, obj.members[1].keyStart, nil}), Rewritten, how
	})
}

// rewrite parses data as its client does, applies edit to the selected
// entries and splices the result.
func rewrite(file string, data []byte, sc Scope, edit func(obj *value, name string, d dialect) ([]splice, Result, string)) ([]byte, []Entry, error) {
	doc, d, err := readDoc(file, data)
	if err != nil {
		return nil, nil, err
	}
	var all []splice
	var done []Entry
	for _, e := range entries(file, d, doc) {
		if len(sc.Servers) > 0 && !slices.Contains(sc.Servers, e.name) {
			continue
		}
		ent := Entry{Server: e.name, Project: e.project}
		if sc.skipProject(e.project) {
			ent.Result = SkippedProject
		} else if e.obj.kind != kindObject {
			ent.Result, ent.Reason = SkippedBroken, "the entry is not an object"
		} else {
			var edits []splice
			edits, ent.Result, ent.Reason = edit(zedCommand(e.obj, d), e.name, d)
			all = append(all, edits...)
		}
		done = append(done, ent)
	}
	return apply(data, all), done, nil
}

// rewriteStdio is rewrite of the stdio entries: a remote entry is skipped,
// and one whose command or args are unusable too, saying why.
func rewriteStdio(file string, data []byte, sc Scope, edit func(obj *value, name string, d dialect, cmd, args *value) ([]splice, Result, string)) ([]byte, []Entry, error) {
	return rewrite(file, data, sc, func(obj *value, name string, d dialect) ([]splice, Result, string) {
		cmd, args, reason := stdio(obj)
		if reason != "" {
			return nil, SkippedBroken, reason
		}
		if cmd == nil {
			return nil, SkippedRemote, ""
		}
		return edit(obj, name, d, cmd, args)
	})
}

// stdio finds the command and args of a stdio entry. A remote entry has a
// nil cmd; reason says why a stdio entry cannot be rewritten.
func stdio(obj *value) (cmd, args *value, reason string) {
	if t := obj.get("type"); t != nil && t.kind == kindString && t.str != "stdio" {
		return nil, nil, ""
	}
	cmd = obj.get("command")
	if cmd == nil && (obj.get("url") != nil || obj.get("serverUrl") != nil || obj.get("httpUrl") != nil) {
		return nil, nil, ""
	}
	if cmd == nil || cmd.kind != kindString {
		return nil, nil, "command is missing or not a string"
	}
	args = obj.get("args")
	if cmd.start < 0 || args != nil && args.start < 0 {
		return nil, nil, "command and args are not written as command = \"...\" and args = [...] lines of a [mcp_servers.NAME] table; edit it by hand"
	}
	if args == nil {
		return cmd, nil, ""
	}
	if args.kind != kindArray {
		return nil, nil, "args is not a list"
	}
	for _, el := range args.elems {
		if el.kind != kindString {
			return nil, nil, "args holds something other than strings"
		}
	}
	return cmd, args, ""
}

func strs(arr *value) []string {
	if arr == nil {
		return nil
	}
	out := make([]string, len(arr.elems))
	for i, el := range arr.elems {
		out[i] = el.str
	}
	return out
}

// arrayPrefix inserts items at the front of arr, laid out like the array:
// one per line with the first element's indentation when it spans lines,
// otherwise inline with the separator its elements already use.
func arrayPrefix(data []byte, arr *value, items [][]byte, sep string) splice {
	interior := data[arr.start+1 : arr.end-1]
	lead := interior[:len(interior)-len(bytes.TrimLeft(interior, " \t\r\n"))]
	pos := arr.start + 1 + len(lead)
	switch {
	case bytes.ContainsRune(lead, '\n'):
		sep = string(lead)
	case len(arr.elems) >= 2:
		sep = spaceBefore(data, arr.elems[1].start)
	}
	text := join(items, sep)
	if len(arr.elems) > 0 {
		text = append(append(text, ','), sep...)
	}
	return splice{pos, pos, text}
}

// afterComma is the offset past the comma that follows off (across
// whitespace and comments) and the whitespace after it.
func afterComma(data []byte, off int) int {
	p := &parser{data: data, pos: off, jsonc: true}
	p.space()
	if p.pos < len(data) && data[p.pos] == ',' {
		p.pos++
	}
	for p.pos < len(data) && strings.IndexByte(" \t\r\n", data[p.pos]) >= 0 {
		p.pos++
	}
	return p.pos
}

// spaceBefore is the run of whitespace that ends at off.
func spaceBefore(data []byte, off int) string {
	i := off
	for i > 0 && strings.IndexByte(" \t\r\n", data[i-1]) >= 0 {
		i--
	}
	return string(data[i:off])
}

// inlineSep is the space after a comma in a file whose colons are followed
// by colon: none in a compact file.
func inlineSep(colon string) string {
	if colon == "" {
		return ""
	}
	return " "
}

func join(items [][]byte, sep string) []byte {
	return bytes.Join(items, []byte(","+sep))
}

// quote is s as a JSON string, without the HTML escaping json.Marshal adds.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// apply makes the splices, which never overlap, in one pass.
func apply(data []byte, edits []splice) []byte {
	slices.SortFunc(edits, func(a, b splice) int { return a.start - b.start })
	out := make([]byte, 0, len(data))
	last := 0
	for _, e := range edits {
		out = append(append(out, data[last:e.start]...), e.text...)
		last = e.end
	}
	return append(out, data[last:]...)
}

// zedCommand returns, for Zed's older entry form "command": {"path": ...,
// "args": [...]}, that inner object with "path" read as "command", so the
// rewrite splices inside it; any other entry as it is.
func zedCommand(obj *value, d dialect) *value {
	c := obj.get("command")
	if d != zed || c == nil || c.kind != kindObject || c.get("path") == nil {
		return obj
	}
	inner := &value{kind: kindObject, start: c.start, end: c.end}
	for _, m := range c.members {
		if m.key == "path" {
			m.key = "command"
		}
		inner.members = append(inner.members, m)
	}
	return inner
}
