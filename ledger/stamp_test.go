package ledger

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestStampFormatsAsTime: the cached formatting is time.Format's, for times
// within one second, across seconds and with every kind of fraction.
func TestStampFormatsAsTime(t *testing.T) {
	var s stamp
	base := time.Date(2026, 12, 1, 23, 59, 58, 0, time.UTC)
	for i := range 20000 {
		at := base.Add(time.Duration(rand.Int64N(int64(3 * time.Second))))
		switch i % 4 {
		case 0:
			at = at.Truncate(time.Second) // no fraction
		case 1:
			at = at.Truncate(time.Millisecond) // trailing zeros
		}
		if got, want := string(s.appendRFC3339Nano(nil, at)), at.UTC().Format(time.RFC3339Nano); got != want {
			t.Fatalf("appendRFC3339Nano(%v) = %q, want %q", at, got, want)
		}
		if got, want := string(s.appendClock(nil, at)), at.Local().Format("15:04:05.000"); got != want {
			t.Fatalf("appendClock(%v) = %q, want %q", at, got, want)
		}
	}
}
