// Package redact owns what counts as a secret in text: the rules that hide
// tokens, keys and credentials in argv, stderr, messages and bodies, and the
// literal values of a server's credential variables (HideEnvSecrets for the
// shim's one server, EnvHider for each server a probe starts). The tracker,
// the supervisor, the probe and the ledger's readers use it; it knows nothing
// of MCP, the ledger or the filesystem.
package redact

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Marker replaces every secret String finds.
const Marker = "[REDACTED]"

// The rule set. It is our own table rather than gitleaks' maintained one:
// gitleaks v8.30.1's config package alone adds 5.9 MB to a binary (viper, a
// WebAssembly RE2) and 24–33 ms to every start to load its 222 rules, and the
// shim starts once per server per client launch. The provider prefixes below
// follow gitleaks' rules for the services MCP servers talk to. README.md
// ("No secrets on disk") lists the rules and what they miss.

// quoted is a JSON string (also one escaped inside another JSON string) or a
// quoted string; value is what follows `name=` or `name:`: a quoted string,
// one cut short before its closing quote (a truncated stderr line or
// preview), or a bare word.
const (
	quoted = `\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\]|\\.)*"|'[^']*'`
	value  = quoted + `|\\?"[^\s"'&,;\\]+`
)

// secretKey matches names whose value is a credential: api_key, X-Api-Key,
// access_token, _authToken, client_secret, password, pass, X-Amz-Signature,
// sig, credentials, auth, cookie, session, session_id, connect.sid, jwt.
const secretKey = `[A-Za-z0-9_.-]*(?i:key|token|secret|password|passwd|pass|pwd|signature|sig|credentials?|auth|cookie|session|session_?id|sid|jwt|bearer)`

var secretKeyName = lazy(`^` + secretKey + `$`)

// lazy compiles a regexp on first use: compiling them all cost every shim
// 0.4 ms and 340 KB at start, before the server could be spawned.
func lazy(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

// rule is one shape of secret. The group named s (or the whole match) is
// replaced; keep, when set, spares a match that is not a secret after all.
// The regexp runs only when one of hints is in the text (lower-cased when
// fold is set): most lines hold none, and a regexp scan costs milliseconds
// on a 64 KiB body where strings.Contains costs microseconds.
type rule struct {
	name  string
	hints []string
	fold  bool
	re    func() *regexp.Regexp // compiled the first time a hint is seen: most never are
	keep  func(groups []string) bool
}

// secretWordHints are the words secretKey and secretFlag look for.
var secretWordHints = []string{"key", "token", "secret", "pass", "pwd", "sig", "credential", "creds", "auth", "cookie", "session", "sid", "bearer", "pat", "jwt"}

// flagHints add mysql's -p to them.
var flagHints = append([]string{"-p"}, secretWordHints...)

var rules = []rule{
	{name: "PEM private key", hints: []string{"PRIVATE KEY"}, re: lazy(`(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY-----|$)`)},
	// Headers in any scheme, to the end of the value: Authorization: Basic …,
	// Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, also as JSON.
	{name: "authorization and cookie headers", fold: true, hints: []string{"authorization", "cookie", "api-key", "x-auth-token"}, re: lazy(`(?i)\b(?:proxy-)?(?:authorization|(?:set-)?cookie|x-api-key|api-key|x-auth-token)\\?"?\s*[=:]\s*(?P<s>` + quoted + `|[^\r\n&\\]+)`)},
	// scheme://user:password@host in every form: :pw@, user@, a password
	// with '/' or '@' in it. A host:port/path@x is not userinfo.
	{name: "URL userinfo", hints: []string{"://"}, re: lazy(`(?i)\b[a-z][a-z0-9+.-]*://(?P<s>[^\s/?#@:"'\\]*(?::[^\s"'\\]*)?)@`), keep: isHostPort},
	// The same cut short before its '@' (a preview, a tail line at its limit):
	// user:password at the very end is still userinfo; host:port is not.
	{name: "URL userinfo cut short", hints: []string{"://"}, re: lazy(`(?i)\b[a-z][a-z0-9+.-]*://(?P<s>[^\s/?#@:"'\\]*:[^\s/?#@"'\\]+)$`), keep: isHostPort},
	// --token X and --token=X inside free text and shell -c strings.
	{name: "secret flag in text", fold: true, hints: flagHints, re: lazy(`(?:^|[\s"'(=;|&])(?P<flag>--?[A-Za-z][A-Za-z0-9_.-]*)(?:=|\s+)(?P<s>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'\\;|&)]+)`), keep: notSecretFlag},
	{name: "name=value, name: value, \"name\":\"value\"", fold: true, hints: secretWordHints, re: lazy(`\b` + secretKey + `\\?"?\s*(?:=>|[=:])\s*(?P<s>` + value + `|[^\s"'&,;\\]+)`)},
	{name: "Bearer credential", fold: true, hints: []string{"bearer"}, re: lazy(`(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)`)},
	{name: "token/secret/password credential", fold: true, hints: []string{"token", "secret", "key", "pass"},
		re: lazy(`(?i)\b(?:token|secret|api[ _-]?key|passphrase|password|passwd)\s+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)`), keep: notRandom},
	// Basic credentials: anything long and random, or base64 of user:password.
	{name: "Basic credential", fold: true, hints: []string{"basic"}, re: lazy(`(?i)\bbasic\s+(?P<s>[A-Za-z0-9+/]{4,}=*)`), keep: notBasic},
	// A JWT, also one cut short: base64url JSON, which starts {" = eyJ.
	{name: "JWT", hints: []string{"eyJ"}, re: lazy(`\beyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*){0,2}`)},
	{name: "OpenAI, Anthropic, DeepSeek sk-", hints: []string{"sk-"}, re: lazy(`\bsk-[A-Za-z0-9_-]{16,}`)},
	{name: "GitHub", hints: []string{"gh", "github_pat_"}, re: lazy(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{name: "GitLab", hints: []string{"gl", "GR1348941"}, re: lazy(`\b(?:gl(?:pat|dt|rt|ptt|soat|oas|cbt|imt|ft|agent|ffct)-[A-Za-z0-9_-]{16,}|GR1348941[A-Za-z0-9_-]{20,})`)},
	{name: "Slack", hints: []string{"xox", "xapp-", "hooks.slack.com"}, re: lazy(`\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/[A-Za-z0-9/]+)`)},
	{name: "Stripe", hints: []string{"_live_", "_test_", "whsec_"}, re: lazy(`\b(?:[srp]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})`)},
	{name: "Google", hints: []string{"AIza", "GOCSPX-", "ya29.", "1//0"}, re: lazy(`\b(?:AIza[0-9A-Za-z_-]{30,}|GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,})`)},
	{name: "AWS access key id", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, re: lazy(`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b`)},
	{name: "Azure AD client secret", hints: []string{"Q~"}, re: lazy(`\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}`)},
	{name: "npm", hints: []string{"npm_"}, re: lazy(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{name: "PyPI", hints: []string{"pypi-AgE"}, re: lazy(`\bpypi-AgE[A-Za-z0-9_-]{50,}`)},
	{name: "Hugging Face", hints: []string{"hf_", "api_org_"}, re: lazy(`\b(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})`)},
	{name: "other AI and SaaS prefixes", hints: []string{"gsk_", "xai-", "r8_", "pplx-", "tvly-", "lin_api_", "ntn_", "secret_", "SG.", "shp", "dop_v1_", "sntrys_", "ATATT3"}, re: lazy(`\b(?:gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{30,}|tvly-[A-Za-z0-9-]{20,}|lin_api_[A-Za-z0-9]{30,}|ntn_[A-Za-z0-9]{30,}|secret_[A-Za-z0-9]{40,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dop_v1_[a-f0-9]{64}|sntrys_[A-Za-z0-9_=+/-]{40,}|ATATT3[A-Za-z0-9_=-]{40,})`)},
}

// hidden are literal values String also hides, longest first: the
// credentials the shim's server was given in its environment, which it may
// echo in a shape no rule knows. HideEnvSecrets sets them once, before the
// session's goroutines start; they are only read after.
var hidden []string

// also are sources of more literal values String hides, for credentials
// that change while the session runs: the remote bridge's (HideAlso).
var also atomic.Pointer[[]func() []string]

// HideAlso makes String also hide, by value, what each of fs returns at
// each call, longest first: the remote bridge's --header values, its URL's
// password and query values, and its OAuth tokens, which the tracker's
// records must hide as stdio's environment values are. Each f must be
// cheap and safe for concurrent use; values shorter than 4 bytes are left.
func HideAlso(fs ...func() []string) { also.Store(&fs) }

// envSecretWords mark a variable whose value is a credential.
var envSecretWords = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PAT", "COOKIE", "SESSION"}

// HideEnvSecrets makes String hide the values (6 bytes or more) of the
// variables in env whose names say they are credentials (GITHUB_TOKEN,
// OPENAI_API_KEY, DB_PASSWORD). Call it once, before the session starts.
func HideEnvSecrets(env []string) {
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		hidden = appendCredential(hidden, name, v)
	}
	longestFirst(hidden)
}

// EnvHider returns String that also hides the credentials in env, by
// HideEnvSecrets' rule, for one server's env: a probe checks many servers
// from one process, so it cannot use the process-wide list.
func EnvHider(env map[string]string) func(string) string {
	var values []string
	for name, v := range env {
		values = appendCredential(values, name, v)
	}
	longestFirst(values)
	return func(s string) string { return String(hideValues(s, values)) }
}

// appendCredential appends v to values if it is a credential's value: 6 bytes
// or more under a credential's name.
func appendCredential(values []string, name, v string) []string {
	if len(v) >= 6 && CredentialName(name) {
		return append(values, v)
	}
	return values
}

// longestFirst sorts values so that one containing another is hidden whole.
func longestFirst(values []string) {
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
}

func hideValues(s string, values []string) string {
	for _, v := range values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Marker)
		}
	}
	return s
}

// CredentialName reports whether a variable's name says it holds a
// credential: one of its parts (split at _ - .) is or ends with a secret word
// (GITHUB_PAT, OPENAI_APIKEY, DB_PASSWORD), not merely contains its letters
// (PATH, KEYBOARD_LAYOUT). It errs towards hiding: MONKEY ends in KEY.
func CredentialName(name string) bool {
	for _, part := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		for _, w := range envSecretWords {
			if strings.HasSuffix(part, w) || strings.HasSuffix(part, w+"S") {
				return true
			}
		}
	}
	return false
}

// String replaces the secrets in s with "[REDACTED]", by the rules above. It
// errs towards hiding: a log line loses a word rather than leaks a secret.
func String(s string) string {
	s = hideValues(s, hidden)
	if fs := also.Load(); fs != nil {
		for _, f := range *fs {
			for _, v := range f() {
				if len(v) >= 4 && strings.Contains(s, v) {
					s = strings.ReplaceAll(s, v, Marker)
				}
			}
		}
	}
	lower := ""
	for i := range rules {
		r := &rules[i]
		text := s
		if r.fold {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			text = lower
		}
		if !containsAny(text, r.hints) {
			continue
		}
		if t := r.apply(s); t != s {
			s, lower = t, ""
		}
	}
	return redactAWSSecret(s)
}

// redactAWSSecret hides a bare AWS secret access key: a run of exactly 40
// base64 characters with a digit and both cases, which a hex digest (lower
// case) is not. A loop, not a regexp: this rule has no literal to look for
// first, and a regexp scan of a 64 KiB body costs ~10 ms.
func redactAWSSecret(s string) string {
	isB64 := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' || c == '+'
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		if digit, upper, lower := classes(s[i:j]); j-i == 40 && (j == len(s) || s[j] != '=') && digit && upper && lower {
			b.WriteString(s[last:i])
			b.WriteString(Marker)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (r *rule) apply(s string) string {
	re := r.re()
	matches := re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	secret := re.SubexpIndex("s")
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[0], m[1]
		if secret > 0 {
			start, end = m[2*secret], m[2*secret+1]
		}
		if start < 0 || start < last {
			continue
		}
		if r.keep != nil {
			groups := make([]string, len(m)/2)
			for g := range groups {
				if m[2*g] >= 0 {
					groups[g] = s[m[2*g]:m[2*g+1]]
				}
			}
			if r.keep(groups) {
				continue
			}
		}
		b.WriteString(s[last:start])
		b.WriteString(Marker)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isHostPort spares host:port/path@x, which is not userinfo.
func isHostPort(g []string) bool {
	_, after, ok := strings.Cut(g[1], ":")
	if !ok {
		return false
	}
	digits := 0
	for digits < len(after) && after[digits] >= '0' && after[digits] <= '9' {
		digits++
	}
	return digits > 0 && digits <= 5 && (digits == len(after) || after[digits] == '/')
}

// notSecretFlag spares a flag whose name is not secret, and a "value" that is
// the next flag.
func notSecretFlag(g []string) bool {
	if g[1] == "-p" {
		return portOrPackage(g[2])
	}
	return !secretFlag(strings.TrimLeft(g[1], "-")) || strings.HasPrefix(g[2], "-") || g[2] == Marker
}

// portOrPackage is a -p value that is not a password: a port mapping
// (8080:80/tcp) or a scoped package (npx -p @scope/pkg).
func portOrPackage(v string) bool {
	return strings.HasPrefix(v, "@") || strings.Trim(v, "0123456789:./tcpud") == ""
}

// notRandom spares a word that does not look generated: a credential has a
// digit, or is long and mixes cases. "token expired" is not a secret.
func notRandom(g []string) bool {
	digit, upper, lower := classes(g[1])
	return !(digit || len(g[1]) >= 16 && upper && lower)
}

func notBasic(g []string) bool {
	if b, err := base64.StdEncoding.DecodeString(g[1]); err == nil && bytes.IndexByte(b, ':') > 0 {
		return false
	}
	return len(g[1]) < 8 || notRandom(g)
}

func classes(s string) (digit, upper, lower bool) {
	for _, r := range s {
		digit = digit || unicode.IsDigit(r)
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
	}
	return digit, upper, lower
}

// Field hides the whole value of a field named like a secret.
func Field(key, val string) string {
	if val != "" && secretKeyName().MatchString(key) {
		return Marker
	}
	return String(val)
}

// Args redacts an argv: the value of a flag whose name looks secret, as
// --token X, --token=X or -p X (a password to mysql and friends; a port
// mapping or a scoped package is spared), and everything String finds in each
// argument, shell -c scripts included.
func Args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = String(a)
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") && secretFlag(strings.TrimLeft(name, "-")) && v != "" {
			out[i] = name + "=" + Marker
		}
		if v, ok := strings.CutPrefix(a, "-p"); ok && v != "" && !portOrPackage(v) { // mysql -pSECRET
			out[i] = "-p" + Marker
		}
		if i == 0 || strings.HasPrefix(a, "--") {
			continue
		}
		prev := args[i-1]
		if strings.Contains(prev, "=") || !strings.HasPrefix(prev, "-") {
			continue
		}
		if prev == "-p" && !portOrPackage(a) || secretFlag(strings.TrimLeft(prev, "-")) {
			out[i] = Marker
		}
	}
	return out
}

// secretWords are the words of a flag name that make its value a secret;
// secretEndings also count at the end of a run-together name (--apitoken).
var (
	secretWords = map[string]bool{"token": true, "key": true, "apikey": true, "secret": true, "password": true, "passwd": true,
		"pass": true, "passphrase": true, "pwd": true, "pat": true, "bearer": true, "auth": true, "authorization": true,
		"credential": true, "credentials": true, "creds": true, "cookie": true, "session": true, "jwt": true, "signature": true}
	secretEndings = []string{"token", "key", "secret", "password", "passwd", "credential", "credentials", "cookie"}
)

// secretFlag reports whether a flag name (without dashes) names a secret:
// api-key, api_key, apiKey, githubToken, auth, pass, but not max-tokens.
func secretFlag(name string) bool {
	var words []string
	var w []rune
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.':
			flush()
		case unicode.IsUpper(r) && prevLower:
			flush()
			w = append(w, r)
		default:
			w = append(w, r)
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	for _, w := range words {
		if secretWords[w] {
			return true
		}
	}
	joined := strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
	for _, e := range secretEndings {
		if strings.HasSuffix(joined, e) {
			return true
		}
	}
	return false
}

// Preview returns at most n bytes of b as valid UTF-8 text, redacted.
// It redacts before it cuts, over previewSlack bytes more: a token cut at n
// would no longer match its rule and keep its first half.
func Preview(b []byte, n int) string {
	if len(b) > n+previewSlack {
		b = b[:n+previewSlack]
	}
	s := String(strings.ToValidUTF8(string(b), "\uFFFD"))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") // a rune cut in two goes
	}
	return s
}

// previewSlack is longer than any token a rule knows but a PEM block, which
// its rule takes to the end of the text.
const previewSlack = 512

// URL is u as it may be shown: no userinfo, no fragment, and each query
// value replaced by Marker (an OAuth code, an api_key).
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.Fragment, c.RawFragment = nil, "", ""
	if c.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(c.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			parts = append(parts, k+"="+Marker)
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// RawURL is URL for a URL as typed, which may not parse: what does not parse
// is not shown at all, as it may hold a password.
func RawURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return URL(u)
}
