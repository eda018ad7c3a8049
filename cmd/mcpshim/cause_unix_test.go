//go:build !windows

package main

// fatalServer reads a line, says why it cannot go on, on stderr, and exits 1.
var fatalServer = []string{"sh", "-c", `read line; echo "fatal: missing API key" >&2; exit 1`}
