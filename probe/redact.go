package probe

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/redact"
)

// secretWords mark an environment variable whose value is a credential.
var secretWords = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// secretRedactor also hides the literal values of the credential variables the
// server was given, which a server may echo in a shape no pattern knows.
func secretRedactor(env map[string]string) func(string) string {
	var values []string
	for k, v := range env {
		upper := strings.ToUpper(k)
		for _, w := range secretWords {
			if strings.Contains(upper, w) && len(v) >= 6 {
				values = append(values, v)
				break
			}
		}
	}
	// Longest first, so a value containing another is hidden whole.
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	return func(s string) string {
		for _, v := range values {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
		return redact.String(s)
	}
}

// redact hides the secrets in everything a server said that a Result keeps
// (its report, the probe cache and the probe's ledger all come from it).
// Tool names stay: a lock compares them with what the shim sees live.
func (r *Result) redact(hide func(string) string) {
	r.Detail = hide(r.Detail)
	r.Realm = hide(r.Realm)
	for i := range r.Warnings {
		r.Warnings[i] = hide(r.Warnings[i])
	}
	for i := range r.StderrTail {
		r.StderrTail[i] = hide(r.StderrTail[i])
	}
	for i := range r.Canaries {
		r.Canaries[i].Detail = hide(r.Canaries[i].Detail)
	}
	for i := range r.Timeline {
		r.Timeline[i].Detail = hide(r.Timeline[i].Detail)
	}
	if r.ServerInfo != nil {
		r.ServerInfo.Name, r.ServerInfo.Version = hide(r.ServerInfo.Name), hide(r.ServerInfo.Version)
	}
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
