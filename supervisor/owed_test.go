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
