package report

import (
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/verdict"
)

func TestShortIDsAndResolve(t *testing.T) {
	runs := []Run{{Facts: verdict.Facts{ID: "run_01KB3F0000AAAA"}}, {Facts: verdict.Facts{ID: "run_01KB3F0000AAAB"}}, {Facts: verdict.Facts{ID: "run_01KB3F9999ZZZZ"}}, {Facts: verdict.Facts{ID: "odd"}}}
	short := ShortIDs(runs)
	if short["run_01KB3F0000AAAA"] != "01KB3F0000AAAA" || short["run_01KB3F9999ZZZZ"] != "01KB3F9999ZZZZ" || short["odd"] != "odd" {
		t.Errorf("shortIDs: got %v, want 14 characters (one past the longest shared prefix)", short)
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
		r, err := Resolve(runs, tc.arg)
		got := ""
		if r != nil {
			got = r.ID
		}
		if got != tc.want || (tc.err == nil) != (err == nil) || tc.err != nil && !strings.Contains(err.Error(), tc.err.Error()) {
			t.Errorf("Resolve(%q): got %q, %v, want %q, %v", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

// A mistyped run id is answered with the nearest one.
func TestResolveSuggestsRun(t *testing.T) {
	runs := []Run{{Facts: verdict.Facts{ID: "run_01M8M1PB3XA4N8"}}, {Facts: verdict.Facts{ID: "run_01M8M1QZZZZZZZ"}}}
	_, err := Resolve(runs, "01M8M1PB3YA4")
	if err == nil || !strings.Contains(err.Error(), "did you mean run_01M8M1PB3XA4N8?") {
		t.Errorf("Resolve(01M8M1PB3YA4) = %v, want a suggestion of run_01M8M1PB3XA4N8", err)
	}
	if _, err := Resolve(runs, "ABCDEFGH"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Resolve(ABCDEFGH) = %v, want no such run and no suggestion", err)
	}
}
