package main

import (
	"bytes"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// answersTo counts the complete responses to id among the client's lines.
func answersTo(out []byte, id string) (n int, lines []string) {
	for _, line := range bytes.Split(out, []byte("\n")) {
		m := mcp.Peek(line)
		if m.IsResponse() && !m.Partial && string(m.RawID) == id {
			n++
			s := string(line)
			if len(s) > 120 {
				s = s[:60] + "..." + s[len(s)-60:]
			}
			lines = append(lines, s)
		}
	}
	return n, lines
}
