package cmdline

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the width usage text is laid out for: an 80-column terminal.
const Width = 80

// PrintFlags lists fs's flags the way the README spells them, with two
// dashes, each followed by its usage folded to Width and indented:
//
//	--timeout DURATION
//	      the deadline of each server (default 5s)
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	const indent = "      "
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  " + Dashed(f.Name)
		if name != "" {
			line += " " + name
		}
		switch f.DefValue {
		case "", "0", "false", "0s", "[]":
		default:
			if !strings.Contains(usage, "(default") {
				if strings.ContainsAny(f.DefValue, " \t") {
					usage += fmt.Sprintf(" (default %q)", f.DefValue)
				} else {
					usage += fmt.Sprintf(" (default %s)", f.DefValue)
				}
			}
		}
		fmt.Fprintln(w, line)
		fmt.Fprint(w, Fold(usage, Width, indent))
	})
}

// Fold breaks text into lines of at most width columns at spaces, each
// starting with indent, and ends every line with a newline. Existing line
// breaks are kept. A word longer than a line (a URL) stands alone on its
// line rather than being cut.
func Fold(text string, width int, indent string) string {
	var b strings.Builder
	for _, para := range strings.Split(text, "\n") {
		line := indent
		for _, word := range strings.Fields(para) {
			switch {
			case line == indent:
				line += word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width:
				b.WriteString(line + "\n")
				line = indent + word
			default:
				line += " " + word
			}
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// Hang prints prefix and text on one line, or, when cols > 0 and the line
// would be wider, text folded at spaces: its later lines start under its
// first, or four columns in when a long prefix leaves it less than 40.
func Hang(w io.Writer, cols int, prefix, text string) {
	if cols <= 0 || utf8.RuneCountInString(prefix+text) <= cols {
		fmt.Fprintln(w, strings.TrimRight(prefix+text, " "))
		return
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	if len(indent) > cols-40 {
		indent = "    "
	}
	line := prefix
	for _, word := range strings.Fields(text) {
		switch {
		case line == prefix || line == indent:
			line += word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > cols:
			fmt.Fprintln(w, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}
