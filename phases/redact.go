package phases

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretKey matches names whose value is a credential: api_key, X-Api-Key,
// access_token, client_secret, password, X-Amz-Signature, sig, credentials.
const secretKey = `[A-Za-z0-9_.-]*(?i:key|token|secret|password|passwd|pwd|signature|sig|credentials?)`

var secretKeyName = regexp.MustCompile(`^` + secretKey + `$`)

// secretPatterns run in order; later ones may see earlier replacements.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Header-style authorization: the scheme and the credential both go.
	{regexp.MustCompile(`(?i)\b(authorization"?\s*[=:]\s*"?)(?:(?:bearer|basic|token|digest)\s+)?[^\s"'&,;]+`), "${1}" + Redacted},
	{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/-]{8,}=*`), "${1} " + Redacted},
	{regexp.MustCompile(`://[^/\s:@]+:[^/\s@]+@`), "://" + Redacted + "@"},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), Redacted},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), Redacted},
	{regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), Redacted},
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), Redacted},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Redacted},
	{regexp.MustCompile(`\b(` + secretKey + `)("?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"'&,;]+)`), "${1}${2}" + Redacted},
}

// Redact replaces token-like values in s with "[REDACTED]": Bearer and
// Authorization credentials, URL user:password, JWTs, OpenAI-style sk-,
// GitHub, Slack and AWS access keys, and the value after key=, token=,
// secret=, password= and similar names (also as `name: value` and JSON).
// It errs towards hiding: a log line loses a word rather than leaks a secret.
func Redact(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// RedactField hides the whole value of a field named like a secret.
func RedactField(key, val string) string {
	if val != "" && secretKeyName.MatchString(key) {
		return Redacted
	}
	return Redact(val)
}

// RedactArgs redacts an argv: token-like values, and the value after a flag
// whose name looks secret (--token xyz, --api-key=xyz).
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	secretFlag := false
	for i, a := range args {
		switch {
		case secretFlag:
			out[i] = Redacted
		default:
			out[i] = Redact(a)
		}
		secretFlag = strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && looksSecret(strings.TrimLeft(a, "-"))
	}
	return out
}

func looksSecret(name string) bool {
	name = strings.ToLower(name)
	for _, w := range []string{"token", "secret", "password", "passwd", "key", "auth", "credential"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
