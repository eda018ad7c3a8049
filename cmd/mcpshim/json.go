package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// printJSON writes v as the indented JSON document a --json flag promises.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// emitJSON prints v for --json and returns status. A document that could not
// be written (a closed pipe, a full disk) is said on stderr and turns a
// success into 1: a script must not take an empty stdout for a clean run.
func (c *cli) emitJSON(name string, v any, status int) int {
	if err := printJSON(c.stdout, v); err != nil {
		fmt.Fprintf(c.stderr, "mcpshim %s: --json: %v\n", name, err)
		if status == 0 {
			return 1
		}
	}
	return status
}
