package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// subcommands are the words mcpshim takes before anything else, in the order
// help lists them.
var subcommands = []string{"ledger", "probe", "lock", "auth", "wrap", "unwrap", "demo", "completion", "help", "version"}

// editDistance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours
// (the usual typos) cost one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// suggest returns the candidate closest to word, if it is close enough to be
// a typo of it (at most a third of its letters, and at least one, off), or "".
func suggest(word string, candidates []string) string {
	best, bestD := "", max(1, len([]rune(word))/3)+1
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// didYouMean is ` (did you mean X?)` for a suggestion, or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %s?", s)
	}
	return ""
}

// printFlags lists fs's flags the way the README and the usage lines spell
// them, with two dashes: "  --timeout DURATION  the deadline... (default 5s)".
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if len(f.Name) > 1 {
			line = "  --" + f.Name
		}
		if name != "" {
			line += " " + name
		}
		if len(line) <= 4 {
			line += "\t"
		} else {
			line += "\n    \t"
		}
		line += strings.ReplaceAll(usage, "\n", "\n    \t")
		switch f.DefValue {
		case "", "0", "false", "0s", "[]":
		default:
			if !strings.Contains(usage, "(default") {
				if strings.ContainsAny(f.DefValue, " \t") {
					line += fmt.Sprintf(" (default %q)", f.DefValue)
				} else {
					line += fmt.Sprintf(" (default %s)", f.DefValue)
				}
			}
		}
		fmt.Fprintln(w, line)
	})
}
