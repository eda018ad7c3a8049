package termsafe

import (
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/windows"
)

// Width is the number of columns of the console window f writes to; terminal
// is false when f is not a console (a pipe, a file). The terminals of Cygwin
// and MSYS2 (mintty) are pipes that do not say their width: 0, true.
func Width(f *os.File) (cols int, terminal bool) {
	var info windows.ConsoleScreenBufferInfo
	if err := windows.GetConsoleScreenBufferInfo(windows.Handle(f.Fd()), &info); err != nil {
		return 0, isatty.IsCygwinTerminal(f.Fd())
	}
	return int(info.Window.Right-info.Window.Left) + 1, true
}

// Color reports whether f is a terminal that shows colour (ANSI escape
// sequences): Windows Terminal, mintty, and a console that takes virtual
// terminal processing, which Color turns on. The old console of Windows
// before 10 does not; it would print the escapes as text.
func Color(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return isatty.IsCygwinTerminal(f.Fd())
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
