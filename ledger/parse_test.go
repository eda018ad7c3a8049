package ledger

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestClockAsTimeParse holds the fast time parse to time.Parse: the same time
// (== , not only Equal) or an error for both, over random times of every
// fraction length and odd spellings, each after a record of the same hour.
func TestClockAsTimeParse(t *testing.T) {
	texts := []string{
		"2026-11-28T00:31:38Z", "2026-11-28T00:31:38.5Z", "2026-11-28T00:31:38.123456789Z", "2026-11-28T00:31:38.1234567891Z",
		"2026-11-28T00:31:38.Z", "2026-11-28T00:31:38.12a4Z", "2026-11-28T00:31:38z", "2026-11-28T00:31:38+01:00",
		"2026-11-28T00:31:38.5+01:00", "2026-02-30T00:31:38Z", "2026-11-28T24:00:00Z", "2026-11-28T00:31:60Z",
		"2026-11-28 00:31:38Z", "2026-11-28T00:31:38", "2026-11-28T00:61:38Z", "2026-11-28T00:3a:38Z", "2026-11-28T00:31:3aZ", "Z", "", "yesterday", "2026-11-28T00:31:38.-5Z", "0000-01-01T00:00:00Z",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		at := time.Unix(rng.Int64N(1<<35)-1<<33, rng.Int64N(1e9)).UTC()
		text := at.Format(time.RFC3339Nano)
		later := at.Add(time.Duration(rng.Int64N(int64(time.Hour)))).Format(time.RFC3339Nano)
		texts = append(texts, text, later) // the second one mostly hits the kept hour
	}
	var c clock
	for _, text := range texts {
		got, gotErr := c.parse([]byte(text))
		want, wantErr := time.Parse(time.RFC3339Nano, text)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("parse(%q) = %v, %v; want %v, %v (time.Parse)", text, got, gotErr, want, wantErr)
		}
	}
}
