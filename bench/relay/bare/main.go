// Command bare is the benchmark's baseline relay: it spawns its argv as a
// child and io.Copy's stdin to the child's stdin and the child's stdout to
// stdout, nothing else. Whatever mcpshim costs beyond this is the price of
// framing, observing and recording.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bare COMMAND [ARG...]")
		os.Exit(64)
	}
	os.Exit(relay(os.Args[1], os.Args[2:]))
}

func relay(name string, args []string) int {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bare: spawn %s: %v\n", name, err)
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bare: spawn %s: %v\n", name, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bare: spawn %s: %v\n", name, err)
		return 127
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close() // the client's EOF is the child's EOF
	}()
	_, _ = io.Copy(os.Stdout, out)
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}
