package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"unicode/utf8"
)

// maxCause bounds a cause in an error message: a client's status line.
const maxCause = 200

// SpawnCause says in a few words why a command could not be started:
// `executable file not found in PATH: "x"`.
func SpawnCause(se *SpawnError) string {
	var ee *exec.Error
	if errors.As(se.Err, &ee) && errors.Is(ee.Err, exec.ErrNotFound) {
		return fmt.Sprintf("executable file not found in PATH: %q", ee.Name)
	}
	return se.Err.Error()
}

// ExitCause is how a child ended and the line that says why, as the client
// is told: "exited with code 1: fatal: missing API key". A child the shim
// stopped is given only a stated line: a banner does not explain a kill.
func ExitCause(how, line string, stated, requested bool) string {
	if line == "" || requested && !stated {
		return how
	}
	return how + ": " + shorten(line)
}

func shorten(s string) string {
	if len(s) <= maxCause {
		return s
	}
	cut := maxCause
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
