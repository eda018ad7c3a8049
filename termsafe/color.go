package termsafe

import (
	"io"
	"os"
)

// ColorOn reports whether text written to w may be coloured: w is a terminal
// that shows colour, TERM is not dumb, and NO_COLOR is unset or empty
// (no-color.org: "when present and not an empty string (regardless of its
// value), prevents the addition of ANSI color"). getenv reads the
// command's environment.
func ColorOn(getenv func(string) string, w io.Writer) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && Color(f)
}
