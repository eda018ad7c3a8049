package cmdline

import (
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2h", now.Add(-2 * time.Hour), true},
		{"3d", now.Add(-72 * time.Hour), true},
		{"1w", now.Add(-7 * 24 * time.Hour), true},
		{"90m", now.Add(-90 * time.Minute), true},
		{"2026-11-29T08:00", time.Date(2026, 11, 29, 8, 0, 0, 0, cet), true},
		{"2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, cet), true},
		{"2026-11-29T08:00:00Z", time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), true},
		{"yesterday", time.Time{}, false},
		{"-2h", time.Time{}, false},
	}
	for _, tc := range tests {
		got, err := ParseSince(tc.in, now, cet)
		if (err == nil) != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q): got %v, %v, want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
