package report

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
)

// minShort is the shortest run prefix shown: the ULID's time part.
const minShort = 10

// ShortIDs gives every run the shortest prefix (without "run_") that tells it
// apart from all others, the same length for all so the column lines up.
func ShortIDs(runs []Run) map[string]string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = strings.TrimPrefix(r.ID, "run_")
	}
	sort.Strings(ids)
	n := minShort
	for i := 1; i < len(ids); i++ {
		n = max(n, commonPrefix(ids[i-1], ids[i])+1)
	}
	out := make(map[string]string, len(runs))
	for _, r := range runs {
		id := strings.TrimPrefix(r.ID, "run_")
		out[r.ID] = id[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// ErrNoRun and ErrAmbiguousRun are Resolve's failures.
var (
	ErrNoRun        = errors.New("no such run")
	ErrAmbiguousRun = errors.New("ambiguous run prefix")
)

// Resolve finds the run arg names: a unique prefix of its id (with or without
// "run_"), or else a unique suffix as the shim prints it (…A4N8).
func Resolve(runs []Run, arg string) (*Run, error) {
	want := strings.TrimPrefix(arg, "run_")
	suffix := strings.TrimPrefix(strings.TrimPrefix(want, "…"), "...")
	for _, match := range []func(id string) bool{
		func(id string) bool { return strings.HasPrefix(id, want) },
		func(id string) bool { return strings.HasSuffix(id, suffix) },
	} {
		var found []*Run
		for i := range runs {
			if match(strings.TrimPrefix(runs[i].ID, "run_")) {
				found = append(found, &runs[i])
			}
		}
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			ids := make([]string, 0, 5)
			for _, r := range found[:min(len(found), 5)] {
				ids = append(ids, r.ID)
			}
			return nil, fmt.Errorf("%w %q: %d runs match (%s…)", ErrAmbiguousRun, arg, len(found), strings.Join(ids, ", "))
		}
	}
	// A typo: the run whose id, cut to arg's length, is nearest.
	best, bestD := "", 3
	for i := range runs {
		id := strings.TrimPrefix(runs[i].ID, "run_")
		for _, p := range [][2]string{{want, id[:min(len(want), len(id))]}, {suffix, id[max(0, len(id)-len(suffix)):]}} {
			if d := cmdline.Distance(strings.ToUpper(p[0]), strings.ToUpper(p[1])); d < bestD && d <= len(p[0])/3 {
				best, bestD = runs[i].ID, d
			}
		}
	}
	if best != "" {
		return nil, fmt.Errorf("%w %q; did you mean %s?", ErrNoRun, arg, best)
	}
	return nil, fmt.Errorf("%w %q", ErrNoRun, arg)
}
