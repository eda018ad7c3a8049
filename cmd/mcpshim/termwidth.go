package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// terminalWidth is the width of the terminal w writes to, or 0 when w is not
// a terminal (a pipe or a file gets every column, uncut). COLUMNS stands in
// when the terminal does not say.
func terminalWidth(c *cli, w any) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0 // not a terminal
	}
	if ws.Col > 0 {
		return int(ws.Col)
	}
	if n, err := strconv.Atoi(c.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}
