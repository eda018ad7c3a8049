package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpus reads a testdata/redact file: its lines, without blanks and # comments.
func corpus(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "redact", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines
}

var marked = strings.NewReplacer("«", "", "»", "")

// want is a marked line with its «spans» replaced, and its secrets.
func want(line string) (string, []string) {
	var b strings.Builder
	var secrets []string
	for {
		before, rest, ok := strings.Cut(line, "«")
		b.WriteString(before)
		if !ok {
			return b.String(), secrets
		}
		secret, after, _ := strings.Cut(rest, "»")
		secrets = append(secrets, secret)
		b.WriteString(Marker)
		line = after
	}
}

func TestRedactLeaks(t *testing.T) {
	for _, line := range corpus(t, "leaks.txt") {
		in := marked.Replace(line)
		w, _ := want(line)
		if got := String(in); got != w {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, w)
		}
	}
}

func TestRedactLeavesCleanText(t *testing.T) {
	for _, in := range corpus(t, "clean.txt") {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	for _, line := range corpus(t, "argv.txt") {
		var argv []string
		if err := json.Unmarshal([]byte(line), &argv); err != nil {
			t.Fatalf("argv.txt: %q: %v", line, err)
		}
		in := make([]string, len(argv))
		wantArgs := make([]string, len(argv))
		for i, a := range argv {
			in[i] = marked.Replace(a)
			wantArgs[i], _ = want(a)
		}
		if got := Args(in); strings.Join(got, "\x00") != strings.Join(wantArgs, "\x00") {
			t.Errorf("Args(%q)\n got %q\nwant %q", in, got, wantArgs)
		}
	}
}

func TestSecretFlag(t *testing.T) {
	for name, want := range map[string]bool{
		"token": true, "api-key": true, "api_key": true, "apiKey": true, "APIKEY": true, "githubToken": true, "accesstoken": true,
		"auth": true, "pass": true, "pat": true, "bearer": true, "client-secret": true, "credentials": true, "cookie": true, "session-id": true,
		"max-tokens": false, "port": false, "path": false, "keyboard": false, "name": false, "verbose": false, "p": false, "passthrough": false,
	} {
		if got := secretFlag(name); got != want {
			t.Errorf("secretFlag(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzRedact plants a secret from the corpus in arbitrary text: it never
// survives String.
func FuzzRedact(f *testing.F) {
	f.Add("prefix ", " suffix", 0)
	f.Add(`{"a":"`, `"}`, 3)
	f.Add("\x1b[2K", "\n", 7)
	f.Add("sh -c 'x ", "'", 11)
	secrets := plantable()
	f.Fuzz(func(t *testing.T, before, after string, i int) {
		s := secrets[uint(i)%uint(len(secrets))]
		in := before + s.text + after
		if got := String(in); strings.Contains(got, s.secret) {
			t.Errorf("String(%q) = %q: %q survives", in, got, s.secret)
		}
	})
}

type plant struct{ text, secret string }

// plantable are the corpus secrets whose shape does not depend on what
// surrounds them (a provider token, a URL, a header at the start of a line).
func plantable() []plant {
	return []plant{
		{" ghp_abcdefghijklmnopqrstuvwxyz0123456789 ", "abcdefghijklmnopqrstuvwxyz0123456789"},
		{" glpat-abcdefghij0123456789 ", "abcdefghij0123456789"},
		{" sk_live_abcdefghij0123456789 ", "abcdefghij0123456789"},
		{" AIzaSyA-abcdefghijklmnopqrstuvwxyz012 ", "abcdefghijklmnopqrstuvwxyz012"},
		{" xoxb-1234567890-abcdefghij ", "1234567890-abcdefghij"},
		{" sk-proj-abcdefghijklmnop1234 ", "abcdefghijklmnop1234"},
		{" AKIAIOSFODNN7EXAMPLE ", "IOSFODNN7EXAMPLE"},
		{" wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{" redis://:pw0123456@cache:6379 ", "pw0123456"},
		{" https://alice:s3cr3tpw@h/ ", "s3cr3tpw"},
		{" --token tok0123456789 ", "tok0123456789"},
		{" --auth=auth0123456789 ", "auth0123456789"},
		{"\nAuthorization: Basic dXNlcjpodW50ZXIy\n", "dXNlcjpodW50ZXIy"},
		{" eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl ", "eyJzdWIiOiIxIn0"},
		{" api_key=key0123456789 ", "key0123456789"},
		{" hf_abcdefghijklmnopqrstuvwxyzABCDEFGH ", "abcdefghijklmnopqrstuvwxyzABCDEFGH"},
		{" npm_abcdefghijklmnopqrstuvwxyz0123456789 ", "abcdefghijklmnopqrstuvwxyz0123456789"},
	}
}

func BenchmarkRedact(b *testing.B) {
	line := "2026-11-29T15:40:00Z INFO fetched issue 4412 from https://tracker.example.test/api/v2 in 31ms (cache miss, 3 retries)"
	body := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`lorem ipsum dolor sit amet 0123 `, 2000) + `"}]}}`
	for _, in := range []struct{ name, s string }{{"stderr-line", line}, {"64KiB-body", body}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.s)))
			for range b.N {
				String(in.s)
			}
		})
	}
}

// TestPreviewRedactsBeforeItCuts: a token that crosses the preview's end
// does not leave its first half behind.
func TestPreviewRedactsBeforeItCuts(t *testing.T) {
	for _, token := range []string{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "sk_live_abcdefghij0123456789"} {
		for cut := 1; cut < len(token); cut++ {
			line := strings.Repeat("x", 100-cut) + " " + token + " tail"
			if got := Preview([]byte(line), 101); strings.Contains(got, token[:min(cut, len(token))]) && cut > 3 {
				t.Errorf("Preview(%q, 101) = %q: keeps the token's first %d bytes", line, got, cut)
			}
		}
	}
}

// TestEveryRuleHasACorpusLine: each rule of the table catches something in
// leaks.txt, so none is untested (or dead).
func TestEveryRuleHasACorpusLine(t *testing.T) {
	lines := corpus(t, "leaks.txt")
	for i := range rules {
		r := &rules[i]
		caught := false
		for _, line := range lines {
			if in := marked.Replace(line); r.apply(in) != in {
				caught = true
				break
			}
		}
		if !caught {
			t.Errorf("rule %q catches no line of testdata/redact/leaks.txt", r.name)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"key sk-test-123456789abcdef":           "key [REDACTED]",
		"token=hunter2hunter2 user=me":          "token=[REDACTED] user=me",
		"https://me:pw@host/x":                  "https://[REDACTED]@host/x",
		"ghp_abcdefghijklmnopqrstuvwxyz0123":    "[REDACTED]",
		"fatal: missing API key":                "fatal: missing API key",
		`{"api_key":"abcd1234efgh","name":"x"}`: `{"api_key":[REDACTED],"name":"x"}`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Args([]string{"--token", "abc", "--name", "x", "--api-key=zzzz1234"}); strings.Join(got, " ") != "--token [REDACTED] --name x --api-key=[REDACTED]" {
		t.Errorf("Args = %q", got)
	}
}

func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "GITHUB_PAT": true, "OPENAI_API_KEY": true, "OPENAI_APIKEY": true, "DB_PASSWORD": true,
		"AWS_SECRET_ACCESS_KEY": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "session-cookie": true, "MY_AUTH": true,
		"PATH": false, "KEYBOARD_LAYOUT": false, "PATH_INFO": false, "HOME": false, "PATHEXT": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRulesCompile compiles every rule: they are compiled lazily, so a
// broken pattern would otherwise panic only on the first text that hints at it.
func TestRulesCompile(t *testing.T) {
	for _, r := range rules {
		if r.re().NumSubexp() < 0 {
			t.Errorf("rule %s", r.name)
		}
	}
	secretKeyName()
}

func TestEnvHider(t *testing.T) {
	hide := EnvHider(map[string]string{"REPORT_API_TOKEN": "plain-value-42", "GITHUB_PAT": "given-pat-77",
		"REPORT_SCOPE": "read-only-scope", "PATH": "/usr/local/bin", "DB_PASSWORD": "short"})
	in := "upstream refused plain-value-42 and given-pat-77 for read-only-scope on /usr/local/bin; short"
	want := "upstream refused [REDACTED] and [REDACTED] for read-only-scope on /usr/local/bin; short"
	if got := hide(in); got != want {
		t.Fatalf("EnvHider(REPORT_API_TOKEN, GITHUB_PAT, REPORT_SCOPE, PATH, DB_PASSWORD under 6 bytes): got %q from %q, want %q", got, in, want)
	}
}
