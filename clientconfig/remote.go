package clientconfig

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// RemoteEntryFlag carries a remote entry's original bytes inside the entry
// that replaced it, so that UnwrapRemote restores them byte for byte. The
// shim accepts and ignores it.
const RemoteEntryFlag = "--remote-entry"

// WrapRemote returns data with each remote entry named in only (all when
// only is empty) replaced by a stdio entry that runs shim as a bridge:
//
//	"command": shim, "args": ["--name", NAME, flags..., "--url", URL,
//	    "--header", "Name: value"..., "--remote-entry", ORIGINAL]
//
// ORIGINAL is the entry's bytes on one line (oneLine). An "sse" entry (the
// 2024-11-05 HTTP+SSE transport) gets "--transport", "sse" before --url.
//
// Header values keep their ${VAR} references, expanded by the shim from its
// environment. Stdio entries are left alone (Wrap does those).
func WrapRemote(file string, data []byte, shim string, flags []string, sc Scope) ([]byte, []Entry, error) {
	return rewriteSome(file, data, sc, func(obj *value, name string, d dialect) ([]splice, Result, string, bool) {
		url, headers, sse, reason, remote := httpEntry(obj)
		if !remote {
			return nil, 0, "", false
		}
		if d != claudeCode && d != cursor && d != vsCode {
			// Each client spells a remote entry its own way (serverUrl, httpUrl, TOML).
			return nil, SkippedRemote, "", true
		}
		if reason != "" {
			return nil, SkippedBroken, reason, true
		}
		items := [][]byte{quote("--name"), quote(name)}
		for _, f := range flags {
			items = append(items, quote(f))
		}
		if sse {
			items = append(items, quote("--transport"), quote("sse"))
		}
		items = append(items, quote("--url"), quote(url))
		for _, h := range headers {
			items = append(items, quote("--header"), quote(h))
		}
		items = append(items, quote(RemoteEntryFlag), quote(oneLine(data[obj.start:obj.end])))
		return []splice{{obj.start, obj.end, stdioObject(data, obj, shim, items)}}, Rewritten, "", true
	})
}

// UnwrapRemote restores each entry WrapRemote made, named in only, to the
// bytes it replaced.
func UnwrapRemote(file string, data []byte, sc Scope) ([]byte, []Entry, error) {
	return rewriteSome(file, data, sc, func(obj *value, _ string, _ dialect) ([]splice, Result, string, bool) {
		cmd, args, _ := stdio(obj)
		if cmd == nil || !isShim(cmd.str) {
			return nil, 0, "", false
		}
		a := strs(args)
		i := slices.Index(a, RemoteEntryFlag)
		if i < 0 || i+1 >= len(a) {
			return nil, 0, "", false
		}
		orig := []byte(a[i+1])
		if !strings.ContainsAny(a[i+1], "\r\n") { // written by oneLine (an older wrap kept the raw lines)
			orig = fromOneLine(a[i+1])
		}
		if !validRemoteEntry(orig) {
			return nil, SkippedBroken, RemoteEntryFlag + " does not hold a JSON object to restore", true
		}
		return []splice{{obj.start, obj.end, orig}}, Rewritten, "", true
	})
}

// remoteWrapped reports whether command and args are an entry WrapRemote
// made: mcpshim with --url and no "--".
func remoteWrapped(command string, args []string) bool {
	return isShim(command) && slices.Contains(args, "--url") && !slices.Contains(args, "--")
}

// rewriteSome is rewrite for the entries edit claims (mine): the others are
// not reported, so a caller can merge these results with Wrap's.
func rewriteSome(file string, data []byte, sc Scope, edit func(obj *value, name string, d dialect) ([]splice, Result, string, bool)) ([]byte, []Entry, error) {
	var claimed []Entry
	out, all, err := rewrite(file, data, sc, func(obj *value, name string, d dialect) ([]splice, Result, string) {
		edits, res, reason, mine := edit(obj, name, d)
		if mine {
			claimed = append(claimed, Entry{Server: name, Result: res, Reason: reason}) // Project: from rewrite's own, below
		}
		return edits, res, reason
	})
	if err != nil {
		return nil, nil, err
	}
	var done []Entry
	for _, e := range all {
		// Claimed in the order rewrite visits entries: the first of a name is this one.
		if i := slices.IndexFunc(claimed, func(c Entry) bool { return c.Server == e.Server }); i >= 0 {
			done = append(done, e)
			claimed = slices.Delete(claimed, i, i+1)
		}
	}
	return out, done, nil
}

// httpEntry reads a remote entry: its url, its headers as `Name: value`,
// and whether it speaks the old HTTP+SSE transport. remote is false for
// anything else.
func httpEntry(obj *value) (url string, headers []string, sse bool, reason string, remote bool) {
	t := obj.get("type")
	typ := ""
	if t != nil && t.kind == kindString {
		typ = t.str
	}
	u := obj.get("url")
	switch {
	case obj.get("command") != nil || typ == "stdio":
		return "", nil, false, "", false
	case typ != "" && typ != "http" && typ != "sse" && typ != "streamable-http" && typ != "streamableHttp":
		return "", nil, false, fmt.Sprintf("type %q is not a transport mcpshim bridges", typ), true
	case u == nil || u.kind != kindString || u.str == "":
		return "", nil, false, "url is missing or not a string", true
	}
	if h := obj.get("headers"); h != nil {
		if h.kind != kindObject {
			return "", nil, false, "headers is not an object", true
		}
		for _, m := range h.members {
			if m.val.kind != kindString || strings.ContainsAny(m.key, ": \r\n") {
				return "", nil, false, fmt.Sprintf("header %q is not a string header", m.key), true
			}
			headers = append(headers, m.key+": "+m.val.str)
		}
	}
	return u.str, headers, typ == "sse", "", true
}

// stdioObject lays out the replacement entry like the one it replaces: one
// member per line with its indentation when it spans lines, inline otherwise.
func stdioObject(data []byte, obj *value, shim string, args [][]byte) []byte {
	colon := ": "
	lead, closing := "", ""
	if len(obj.members) > 0 {
		m := obj.members[0]
		colon = spaceBefore(data, m.val.start)
		colon = ":" + colon
		lead = spaceBefore(data, m.keyStart)
		closing = spaceBefore(data, obj.end-1)
	}
	sep := ","
	if !strings.Contains(lead, "\n") {
		sep = "," + inlineSep(strings.TrimPrefix(colon, ":"))
	}
	var b bytes.Buffer
	b.WriteString("{" + lead)
	if t := obj.get("type"); t != nil {
		b.WriteString(`"type"` + colon + `"stdio"` + sep + trimComma(lead))
	}
	b.WriteString(`"command"` + colon)
	b.Write(quote(shim))
	b.WriteString(sep + trimComma(lead) + `"args"` + colon + "[")
	b.Write(bytes.Join(args, []byte(", ")))
	b.WriteString("]" + closing + "}")
	return b.Bytes()
}

// trimComma is the indentation to repeat after a separator that already
// holds the line break.
func trimComma(lead string) string {
	if strings.Contains(lead, "\n") {
		return lead
	}
	return ""
}

// validRemoteEntry reports whether b, a --remote-entry value, is a JSON
// (JSONC, in VS Code's files) object: unwrap refuses to splice anything
// else into a config.
func validRemoteEntry(b []byte) bool {
	v, err := parseWith("", b, true, true, "")
	return err == nil && v.kind == kindObject
}

// RemoteName labels a remote server after its host: mcp.linear.app -> linear.
func RemoteName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "remote"
	}
	parts := strings.Split(u.Hostname(), ".")
	for _, p := range parts {
		if p != "mcp" && p != "www" && p != "api" {
			return p
		}
	}
	return u.Hostname()
}

// RewriteRemote is wrap --remote and unwrap's second pass over a config:
// Streamable HTTP entries become `mcpshim --url` entries (with flags), and
// back. Its results replace the first pass's entries for those it rewrote.
func RewriteRemote(file string, data []byte, entries []Entry, shim string, flags []string, sc Scope, unwrap bool) ([]byte, []Entry, error) {
	var out []byte
	var mine []Entry
	var err error
	if unwrap {
		out, mine, err = UnwrapRemote(file, data, sc)
	} else {
		out, mine, err = WrapRemote(file, data, shim, flags, sc)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, m := range mine {
		for i := range entries {
			if entries[i].Server == m.Server && entries[i].Project == m.Project {
				entries[i].Result, entries[i].Reason = m.Result, m.Reason
			}
		}
	}
	return out, entries, nil
}
