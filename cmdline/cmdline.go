// Package cmdline reads a command line the way a person types it: flags
// and arguments in any order, and a mistake answered in one line that says
// what is wrong, suggests the flag that was probably meant and points at
// --help, the way git and kubectl answer (Go's flag package printed
// "flag provided but not defined: -nmae" and the whole usage). It also lays
// usage text out for a terminal. It knows no command of mcpshim's.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrHelp is -h or --help: print the usage on stdout and exit 0.
var ErrHelp = flag.ErrHelp

// Parse parses args with fs, flags and positionals in any order (after "--"
// everything is positional), and returns the positionals. A mistake is an
// error of one line, ending with where help is: "mcpshim probe --help lists
// the flags" for help "mcpshim probe --help".
func Parse(fs *flag.FlagSet, args []string, help string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ErrHelp
			}
			return nil, Explain(fs, err, help)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// Explain turns an error of fs.Parse into one line a person can act on,
// ending with where help is unless help is "".
func Explain(fs *flag.FlagSet, err error, help string) error {
	msg := err.Error()
	hint := ""
	if help != "" {
		hint = fmt.Sprintf(" (%s lists the flags)", help)
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Errorf("unknown flag %s%s%s", Dashed(name), DidYouMean(name, names, "--"), hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("%s needs a value%s", Dashed(name), hint)
	}
	var value, name, why string
	if n, _ := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); n == 2 {
		name, why = strings.TrimSuffix(name, ":"), afterColon(msg)
	} else if n, _ := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name); n == 2 {
		name, why = strings.TrimSuffix(name, ":"), afterColon(msg)
	} else {
		return fmt.Errorf("%s%s", msg, hint)
	}
	if f := fs.Lookup(name); f != nil && (why == "parse error" || why == "value out of range") {
		why = want(f.Value, why == "value out of range")
	}
	return fmt.Errorf("%s %s: %s%s", Dashed(name), value, why, hint)
}

// afterColon is the reason at the end of one of flag's messages: the part
// after the last ": ".
func afterColon(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// want says what a flag's value must look like, for flag's bare
// "parse error" and "value out of range".
func want(v flag.Value, outOfRange bool) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return "not a valid value"
	}
	var what string
	switch g.Get().(type) {
	case time.Duration:
		what = "a duration such as 2s, 500ms or 1m30s"
	case int, int64, uint, uint64:
		what = "a whole number"
	case float64:
		what = "a number"
	case bool:
		what = "true or false (or the flag alone)"
	default:
		return "not a valid value"
	}
	if outOfRange {
		return "out of range: want " + what + " that fits"
	}
	return "want " + what
}

// Dashed spells a flag name as the README does: --name, and -h for a letter.
func Dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// DidYouMean is "; did you mean PREFIX+X?" for the candidate closest to
// word, or "" when none is close enough to be a typo of it.
func DidYouMean(word string, candidates []string, prefix string) string {
	if s := Suggest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %s%s?", prefix, s)
	}
	return ""
}

// Suggest returns the candidate closest to word, if it is close enough to be
// a typo of it (at most a third of its letters, and at least one, off), or "".
func Suggest(word string, candidates []string) string {
	best, bestD := "", max(1, len([]rune(word))/3)+1
	for _, c := range candidates {
		if d := Distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours
// (the usual typos) cost one each.
func Distance(a, b string) int {
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
