package mcp

import (
	"strings"
	"testing"
)

func TestDiffTools(t *testing.T) {
	before := map[string]string{"a": "1", "b": "2", "c": "3"}
	for _, tc := range []struct {
		after          map[string]string
		added, removed string
		redefined      bool
	}{
		{map[string]string{"a": "1", "b": "2", "c": "3"}, "", "", false},
		{map[string]string{"a": "1", "b": "9", "c": "3"}, "", "", true},
		{map[string]string{"a": "1", "d": "4", "c": "3", "e": "5"}, "d,e", "b", false},
		{map[string]string{}, "", "a,b,c", false},
	} {
		added, removed, redefined := DiffTools(before, tc.after)
		if strings.Join(added, ",") != tc.added || strings.Join(removed, ",") != tc.removed || redefined != tc.redefined {
			t.Errorf("DiffTools(%v, %v): got %v %v %v, want %s %s %v", before, tc.after, added, removed, redefined, tc.added, tc.removed, tc.redefined)
		}
	}
}
