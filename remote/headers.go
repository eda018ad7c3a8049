package remote

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Header is one --header NAME: VALUE, its value expanded from the shim's
// environment. Its value is a secret: it goes on the wire and nowhere else.
type Header struct {
	Name, Value string
}

// ErrHeader is returned by ParseHeader for a value that is not `Name: value`.
var ErrHeader = errors.New("want 'Name: value'")

// reserved are the headers the bridge owns: a user's copy would break the
// transport (a stale session id, a wrong content type).
var reserved = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Accept": true, "Host": true,
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Mcp-Method": true, "Mcp-Name": true, "Last-Event-Id": true,
}

// varRef is compiled on first use: only the bridge reads --header, and every
// shim starts sooner.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

// ParseHeader reads `Name: value` and expands every ${VAR} and
// ${VAR:-default} in the value from lookup. An unset variable without a
// default is an error naming it: a request with an empty credential fails
// for the wrong reason, later, far from the cause.
func ParseHeader(s string, lookup func(string) (string, bool)) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return Header{}, fmt.Errorf("--header %q: %w", nameOnly(s), ErrHeader)
	}
	canon := http.CanonicalHeaderKey(name)
	if reserved[canon] {
		return Header{}, fmt.Errorf("--header %s: the bridge sets this header itself", canon)
	}
	var missing []string
	value = varRef().ReplaceAllStringFunc(strings.TrimSpace(value), func(ref string) string {
		m := varRef().FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok && (v != "" || m[2] == "") {
			return v
		}
		if m[2] != "" {
			return m[3] // ${VAR:-default}: unset or empty gives the default, as in sh
		}
		missing = append(missing, m[1])
		return ""
	})
	if len(missing) > 0 {
		return Header{}, fmt.Errorf("--header %s: %s is not set in the environment; set it in the entry's env, or write ${%s:-default}", canon, missing[0], missing[0])
	}
	if strings.ContainsAny(value, "\r\n") {
		return Header{}, fmt.Errorf("--header %s: the value holds a line break", canon)
	}
	return Header{Name: canon, Value: value}, nil
}

// nameOnly keeps a malformed --header's value out of the error message:
// what has no colon may be a bare secret.
func nameOnly(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.ContainsAny(s[:i], " \t") {
		return s[:i] + ": …"
	}
	return fmt.Sprintf("%d bytes with no 'Name:'", len(s))
}

// headerNames are the names of hs, for the ledger: values never leave the wire.
func headerNames(hs []Header) []string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return names
}
