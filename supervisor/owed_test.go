package supervisor

import "testing"

func TestOwedMessage(t *testing.T) {
	tests := []struct{ cause, why, want string }{
		{"", notRunning, "mcpshim: server s is not running; the request was not answered"},
		{"exited with code 1: fatal: no key", notRunning, "mcpshim: server s exited with code 1: fatal: no key; the request was not answered"},
		{"cannot start: executable file not found in PATH: \"x\"", notRunning, "mcpshim: server s cannot start: executable file not found in PATH: \"x\"; the request was not answered"},
		{"was killed by SIGKILL", "could not be reached", "mcpshim: server s could not be reached (was killed by SIGKILL); the request was not answered"},
	}
	for _, tt := range tests {
		s := &Supervisor{cfg: Config{Name: "s"}, cause: tt.cause}
		if got := s.owedMessage(tt.why); got != tt.want {
			t.Errorf("owedMessage(%q) with cause %q = %q, want %q", tt.why, tt.cause, got, tt.want)
		}
	}
}

// TestDiedMessage: the error owed for a request a child did not answer says
// how it ended, and who stopped it when the shim did.
func TestDiedMessage(t *testing.T) {
	tests := []struct {
		code         int
		sig, stopped string
		said, want   string
	}{
		{1, "", "", "fatal: missing API key", "mcpshim: server s exited with code 1 before answering: fatal: missing API key"},
		{-1, "SIGKILL", "", "", "mcpshim: server s was killed by SIGKILL before answering"},
		{-1, "SIGTERM", "after the client left", "", "mcpshim: server s did not answer: stopped by mcpshim after the client left: killed by SIGTERM"},
		{0, "", "after the client left", "", "mcpshim: server s did not answer: stopped by mcpshim after the client left: exited with code 0"},
		{1, "", "on SIGINT", "Error: interrupted", "mcpshim: server s did not answer: stopped by mcpshim on SIGINT: exited with code 1: Error: interrupted"},
	}
	for _, tt := range tests {
		how := exitWords(tt.code, tt.sig, tt.stopped)
		if got := diedMessage("s", how, tt.said, tt.stopped != ""); got != tt.want {
			t.Errorf("code %d, signal %q, stopped %q, said %q: got %q, want %q", tt.code, tt.sig, tt.stopped, tt.said, got, tt.want)
		}
	}
}
