package report

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

func idsOf(ids ...string) *IDs {
	s := &IDs{}
	for _, id := range ids {
		s.Add(id)
	}
	s.Done()
	return s
}

func TestShortIDsAndResolve(t *testing.T) {
	ids := idsOf("run_01KB3F0000AAAA", "run_01KB3F0000AAAB", "run_01KB3F9999ZZZZ", "odd")
	for id, want := range map[string]string{"run_01KB3F0000AAAA": "01KB3F0000AAAA", "run_01KB3F9999ZZZZ": "01KB3F9999ZZZZ", "odd": "odd"} {
		if got := ids.Short(id); got != want {
			t.Errorf("Short(%s) = %q, want %q (one past the longest shared prefix)", id, got, want)
		}
	}
	tests := []struct {
		arg, want string
		err       error
	}{
		{"01KB3F0000AAAA", "run_01KB3F0000AAAA", nil},
		{"run_01KB3F99", "run_01KB3F9999ZZZZ", nil},
		{"…ZZZZ", "run_01KB3F9999ZZZZ", nil},
		{"AAAB", "run_01KB3F0000AAAB", nil},
		{"01KB3F0000", "", ErrAmbiguousRun},
		{"01XX", "", ErrNoRun},
	}
	for _, tc := range tests {
		got, err := ids.Resolve(tc.arg)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Resolve(%q): got %q, %v, want %q, %v", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

// A mistyped run id is answered with the nearest one.
func TestResolveSuggestsRun(t *testing.T) {
	ids := idsOf("run_01M8M1PB3XA4N8", "run_01M8M1QZZZZZZZ")
	_, err := ids.Resolve("01M8M1PB3YA4")
	if err == nil || !strings.Contains(err.Error(), "did you mean run_01M8M1PB3XA4N8?") {
		t.Errorf("Resolve(01M8M1PB3YA4) = %v, want a suggestion of run_01M8M1PB3XA4N8", err)
	}
	if _, err := ids.Resolve("ABCDEFGH"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Resolve(ABCDEFGH) = %v, want no such run and no suggestion", err)
	}
}

// TestShortAsStrings holds the short length of ULIDs (16 bytes each) to the
// one of their texts, sorted, with other ids among them and ids twice.
func TestShortAsStrings(t *testing.T) {
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for n := range 300 {
		var all []string
		for i := range n {
			all = append(all, ledger.NewID("run", at.Add(time.Duration(i%7)*time.Millisecond)))
		}
		if n%3 == 0 {
			all = append(all, "odd", "run_odd", "run_01")
		}
		if n > 0 {
			all = append(all, all[0]) // the same run read from two ledgers
		}
		ids := idsOf(all...)
		want := MinShort
		texts := map[string]bool{}
		for _, a := range all {
			texts[trim(a)+"\x00"+a] = true
		}
		var keys []string
		for k := range texts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i := 1; i < len(keys); i++ {
			a, b := strings.SplitN(keys[i-1], "\x00", 2)[0], strings.SplitN(keys[i], "\x00", 2)[0]
			want = max(want, commonPrefix(a, b)+1)
		}
		if ids.short != want {
			t.Fatalf("%d ids: short length %d, want %d", len(all), ids.short, want)
		}
		if got := ids.Len(); got != len(keys) {
			t.Fatalf("%d ids, %d distinct: Len %d", len(all), len(keys), got)
		}
	}
}
