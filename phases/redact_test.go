package phases

import "testing"

func TestRedactPatterns(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"nothing secret here: tool=issue_lookup host=api.example.test", "nothing secret here: tool=issue_lookup host=api.example.test"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "Authorization: [REDACTED]"},
		{"authorization=Basic dXNlcjpwYXNzd29yZA==", "authorization=[REDACTED]"},
		{"sent bearer abcdefgh12345678 upstream", "sent bearer [REDACTED] upstream"},
		{"the bearer of bad news", "the bearer of bad news"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl done", "jwt [REDACTED] done"},
		{"key sk-proj-abcdefghijklmnop1234 used", "key [REDACTED] used"},
		{"sk-learn is a library", "sk-learn is a library"},
		{"gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [REDACTED]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED]"},
		{"slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"},
		{"aws AKIAIOSFODNN7EXAMPLE region", "aws [REDACTED] region"},
		{"https://alice:s3cr3t@tracker.example.test/api", "https://[REDACTED]@tracker.example.test/api"},
		{"https://tracker.example.test:8443/a@b", "https://tracker.example.test:8443/a@b"},
		{"GET /x?api_key=abc&page=2", "GET /x?api_key=[REDACTED]&page=2"},
		{"X-Amz-Signature=deadbeef;", "X-Amz-Signature=[REDACTED];"},
		{"password: hunter2 ok", "password: [REDACTED] ok"},
		{`{"client_secret": "two words", "id": 3}`, `{"client_secret": [REDACTED], "id": 3}`},
		{"secret='quoted value'", "secret=[REDACTED]"},
		{"tokens=1500 token_count=3", "tokens=1500 token_count=3"},
		{"token expired, retrying", "token expired, retrying"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
