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
	Rewritten     Result = iota // wrapped by Wrap, unwrapped by Unwrap
	Unchanged                   // already wrapped (Wrap) or not wrapped (Unwrap)
	SkippedRemote               // a url entry: there is no process to put mcpshim in front of
	SkippedBroken               // command or args unusable as written; Reason says why
)

// Entry is one server entry a rewrite looked at.
type Entry struct {
	Server  string
	Project string // the projects key in ~/.claude.json, "" elsewhere
	Result  Result
	Reason  string // for SkippedBroken
}

// splice replaces data[start:end] with text.
type splice struct {
	start, end int
	text       []byte
}

// Wrap returns data with each stdio entry named in only (all when only is
// empty) rewritten to run shim, an absolute path:
//
//	"command": shim, "args": ["--name", NAME, flags..., "--", COMMAND, ARGS...]
//
// Only the bytes of the command value and the args value change (an args
// member is added when there was none), so key order, whitespace, line
// endings and unknown keys survive, and Unwrap restores the original bytes.
// Wrapped entries are left as they are. The file must be strict JSON:
// comments are refused rather than risked.
func Wrap(file string, data []byte, shim string, flags []string, only []string) ([]byte, []Entry, error) {
	return rewrite(file, data, only, func(obj *value, name string) ([]splice, Result, string) {
		cmd, args, reason := stdio(obj)
		if reason != "" {
			return nil, SkippedBroken, reason
		}
		if cmd == nil {
			return nil, SkippedRemote, ""
		}
		if _, _, ok := splitShim(cmd.str, strs(args)); ok || remoteWrapped(cmd.str, strs(args)) {
			return nil, Unchanged, ""
		}
		items := [][]byte{quote("--name"), quote(name)}
		for _, f := range flags {
			items = append(items, quote(f))
		}
		items = append(items, quote("--"), data[cmd.start:cmd.end])
		edits := []splice{{cmd.start, cmd.end, quote(shim)}}
		colon := spaceBefore(data, cmd.start)
		if args == nil {
			lead := spaceBefore(data, obj.members[obj.index("command")].keyStart)
			if lead == "" { // {"command": ...} on one line: space like the colon does
				lead = inlineSep(colon)
			}
			text := fmt.Appendf(nil, ",%s\"args\":%s[%s]", lead, colon, join(items, inlineSep(colon)))
			return append(edits, splice{cmd.end, cmd.end, text}), Rewritten, ""
		}
		return append(edits, arrayPrefix(data, args, items, inlineSep(spaceBefore(data, args.start)))), Rewritten, ""
	})
}

// Unwrap returns data with each entry named in only (all when only is empty)
// that runs mcpshim restored to the server after "--": the exact bytes Wrap
// replaced, and a sensible layout for an entry wrapped by hand. An args list
// left empty is removed with its key, since Wrap adds one when there was none.
func Unwrap(file string, data []byte, only []string) ([]byte, []Entry, error) {
	return rewrite(file, data, only, func(obj *value, _ string) ([]splice, Result, string) {
		cmd, args, reason := stdio(obj)
		if reason != "" {
			return nil, SkippedBroken, reason
		}
		if cmd == nil {
			return nil, SkippedRemote, ""
		}
		shim, real, ok := splitShim(cmd.str, strs(args))
		if !ok {
			return nil, Unchanged, ""
		}
		if len(real) == 0 {
			return nil, SkippedBroken, `nothing after "--" to restore`
		}
		server := args.elems[len(shim)+1]
		edits := []splice{{cmd.start, cmd.end, data[server.start:server.end]}}
		if len(real) > 1 {
			return append(edits, splice{args.elems[0].start, args.elems[len(shim)+2].start, nil}), Rewritten, ""
		}
		i := obj.index("args")
		if i > 0 {
			return append(edits, splice{obj.members[i-1].val.end, args.end, nil}), Rewritten, ""
		}
		return append(edits, splice{obj.members[0].keyStart, obj.members[1].keyStart, nil}), Rewritten, ""
	})
}

// rewrite parses data strictly, applies edit to the selected entries and
// splices the result.
func rewrite(file string, data []byte, only []string, edit func(obj *value, name string) ([]splice, Result, string)) ([]byte, []Entry, error) {
	doc, d, err := readDoc(file, data, false)
	if err != nil {
		return nil, nil, err
	}
	var all []splice
	var done []Entry
	for _, e := range entries(file, d, doc) {
		if len(only) > 0 && !slices.Contains(only, e.name) {
			continue
		}
		ent := Entry{Server: e.name, Project: e.project}
		if e.obj.kind != kindObject {
			ent.Result, ent.Reason = SkippedBroken, "the entry is not an object"
		} else {
			var edits []splice
			edits, ent.Result, ent.Reason = edit(e.obj, e.name)
			all = append(all, edits...)
		}
		done = append(done, ent)
	}
	return apply(data, all), done, nil
}

// stdio finds the command and args of a stdio entry. A remote entry has a
// nil cmd; reason says why a stdio entry cannot be rewritten.
func stdio(obj *value) (cmd, args *value, reason string) {
	if t := obj.get("type"); t != nil && t.kind == kindString && t.str != "stdio" {
		return nil, nil, ""
	}
	cmd = obj.get("command")
	if cmd == nil && obj.get("url") != nil {
		return nil, nil, ""
	}
	if cmd == nil || cmd.kind != kindString {
		return nil, nil, "command is missing or not a string"
	}
	args = obj.get("args")
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
