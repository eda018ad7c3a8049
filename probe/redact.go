package probe

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/phases"
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
		return phases.Redact(s)
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
