package report

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
)

// IDs are the ids of the runs read: what their short form must tell apart, and
// where the run a person typed is looked up. A run id the shim made costs 16
// bytes (its ULID); any other is kept as it is.
type IDs struct {
	ulids  []ledger.ULID // of the ids "run_" + ULID
	others []string      // every other id, whole
	short  int           // the length of the short forms, once Done
}

// MinShort is the shortest short form: the ULID's time part.
const MinShort = 10

// Add adds a run's id; the same id twice counts once.
func (s *IDs) Add(id string) {
	if prefix, u, ok := ledger.ParseID(id); ok && prefix == "run" {
		s.ulids = append(s.ulids, u)
		return
	}
	s.others = append(s.others, id)
}

// Merge adds o's ids.
func (s *IDs) Merge(o *IDs) {
	s.ulids = append(s.ulids, o.ulids...)
	s.others = append(s.others, o.others...)
}

// Done sorts the ids, drops repeats and sets the short forms' length: one
// past the longest prefix two ids share (without "run_"), at least MinShort,
// the same for all so that a column of them lines up.
func (s *IDs) Done() {
	slices.SortFunc(s.ulids, compareULID)
	s.ulids = slices.Compact(s.ulids)
	slices.SortFunc(s.others, func(a, b string) int { return cmp.Or(strings.Compare(trim(a), trim(b)), strings.Compare(a, b)) })
	s.others = slices.Compact(s.others)
	n := MinShort
	for i := 1; i < len(s.ulids); i++ {
		x := ledger.ULID{Hi: s.ulids[i-1].Hi ^ s.ulids[i].Hi, Lo: s.ulids[i-1].Lo ^ s.ulids[i].Lo}
		zeros := bits.LeadingZeros64(x.Hi)
		if x.Hi == 0 {
			zeros = 64 + bits.LeadingZeros64(x.Lo)
		}
		// 26 digits of 5 bits hold 130 bits: the ULID's 128 and two zeros.
		n = max(n, (zeros+2)/5+1)
	}
	// The others, in text order among the ULIDs' texts: only neighbours
	// share the longest prefixes.
	var buf [26]byte
	for i, o := range s.others {
		t := trim(o)
		if i > 0 {
			n = max(n, commonPrefix(trim(s.others[i-1]), t)+1)
		}
		j, _ := slices.BinarySearchFunc(s.ulids, t, func(u ledger.ULID, t string) int { return strings.Compare(string(u.Append(buf[:0])), t) })
		for _, k := range []int{j - 1, j} {
			if k >= 0 && k < len(s.ulids) {
				n = max(n, commonPrefix(string(s.ulids[k].Append(buf[:0])), t)+1)
			}
		}
	}
	s.short = n
}

func compareULID(a, b ledger.ULID) int {
	return cmp.Or(cmp.Compare(a.Hi, b.Hi), cmp.Compare(a.Lo, b.Lo))
}

func trim(id string) string { return strings.TrimPrefix(id, "run_") }

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// Len is how many distinct ids there are, once Done.
func (s *IDs) Len() int { return len(s.ulids) + len(s.others) }

// Short is id's short form (after Done): the prefix that tells it apart from
// every other id, without "run_".
func (s *IDs) Short(id string) string {
	t := trim(id)
	return t[:min(s.short, len(t))]
}

// ErrNoRun and ErrAmbiguousRun are Resolve's failures.
var (
	ErrNoRun        = errors.New("no such run")
	ErrAmbiguousRun = errors.New("ambiguous run prefix")
)

// Resolve finds the id arg names (after Done): a unique prefix of an id (with
// or without "run_"), or else a unique suffix as the shim prints it (…A4N8).
// Failing that, the error suggests the id nearest to a typo.
func (s *IDs) Resolve(arg string) (string, error) {
	want := trim(arg)
	suffix := strings.TrimPrefix(strings.TrimPrefix(want, "…"), "...")
	for _, match := range []func(t string) bool{
		func(t string) bool { return strings.HasPrefix(t, want) },
		func(t string) bool { return strings.HasSuffix(t, suffix) },
	} {
		var found []string
		s.each(func(id, t string) {
			if match(t) {
				found = append(found, id)
			}
		})
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			return "", fmt.Errorf("%w %q: %d runs match (%s…)", ErrAmbiguousRun, arg, len(found), strings.Join(found[:min(len(found), 5)], ", "))
		}
	}
	// A typo: the id whose text, cut to arg's length, is nearest.
	best, bestD := "", 3
	s.each(func(id, t string) {
		for _, p := range [][2]string{{want, t[:min(len(want), len(t))]}, {suffix, t[max(0, len(t)-len(suffix)):]}} {
			if d := cmdline.Distance(strings.ToUpper(p[0]), strings.ToUpper(p[1])); d < bestD && d <= len(p[0])/3 {
				best, bestD = id, d
			}
		}
	})
	if best != "" {
		return "", fmt.Errorf("%w %q; did you mean %s?", ErrNoRun, arg, best)
	}
	return "", fmt.Errorf("%w %q", ErrNoRun, arg)
}

// each calls fn with every id and its text without "run_", in text order.
func (s *IDs) each(fn func(id, text string)) {
	buf := []byte("run_")
	i, j := 0, 0
	for i < len(s.ulids) || j < len(s.others) {
		var u string
		if i < len(s.ulids) {
			u = string(s.ulids[i].Append(buf[:4]))
		}
		if j < len(s.others) && (i == len(s.ulids) || trim(s.others[j]) < u[4:]) {
			fn(s.others[j], trim(s.others[j]))
			j++
			continue
		}
		fn(u, u[4:])
		i++
	}
}
