package testfixtures

import (
	"fmt"
	"io"
)

// killSelf: Windows has no signal to send oneself; the fixture exits 1.
func killSelf(name string, errw io.Writer) int {
	fmt.Fprintf(errw, "fixture fault: no signal %s on Windows\n", name)
	return 1
}
