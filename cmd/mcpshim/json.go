package main

import (
	"encoding/json"
	"io"
)

// printJSON writes v as the indented JSON document a --json flag promises.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
