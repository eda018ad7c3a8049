//go:build !windows

package termsafe

import (
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// Width is the number of columns of the terminal f writes to; terminal is
// false when f is not one (a pipe, a file). A terminal may not say: 0, true.
func Width(f *os.File) (cols int, terminal bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}

// Color reports whether f is a terminal that shows colour (ANSI escape
// sequences). Every Unix terminal does.
func Color(f *os.File) bool { return isatty.IsTerminal(f.Fd()) }
