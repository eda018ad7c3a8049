package phases

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

var secretPatterns = []*regexp.Regexp{
	// Authorization: Bearer xxx / Basic xxx
	regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`),
	// key=value, key: value, "key":"value" for secret-looking keys
	regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?key|secret|token|password|passwd|pwd|auth|credential|client[_-]?secret|private[_-]?key)[A-Za-z0-9_-]*"?\s*[:=]\s*"?)([^\s"',&;]{4,})`),
	// well-known token shapes
	regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{10,}`),
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), // JWT
	regexp.MustCompile(`(?i)://[^/\s:@]+:[^/\s@]+@`),                                   // user:pass@ in URLs
}

// Redact replaces token-like values in s with Redacted. It errs on the side
// of hiding: a ledger that leaks the credential it was meant to investigate
// makes the incident worse (seed 002).
func Redact(s string) string {
	if s == "" {
		return s
	}
	for i, re := range secretPatterns {
		switch i {
		case 0:
			s = re.ReplaceAllStringFunc(s, func(m string) string {
				sp := strings.IndexAny(m, " \t")
				return m[:sp+1] + Redacted
			})
		case 1:
			s = re.ReplaceAllStringFunc(s, func(m string) string {
				sub := re.FindStringSubmatch(m)
				switch strings.ToLower(sub[2]) {
				case "bearer", "basic", "token", Redacted:
					return m // "Authorization: Bearer …" was handled above
				}
				return sub[1] + Redacted
			})
		case len(secretPatterns) - 1:
			s = re.ReplaceAllString(s, "://"+Redacted+"@")
		default:
			s = re.ReplaceAllString(s, Redacted)
		}
	}
	return s
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
