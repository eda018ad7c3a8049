package backoff

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		base, max time.Duration
		doublings int
		jitter    func() float64
		want      time.Duration
	}{
		{s / 4, 30 * s, 0, nil, s / 4},
		{s / 4, 30 * s, 3, nil, 2 * s},
		{s / 4, 30 * s, 1000, nil, 30 * s}, // no overflow
		{s, 30 * s, 2, func() float64 { return 0 }, 3200 * time.Millisecond},
		{s, 30 * s, 2, func() float64 { return 0.999 }, time.Duration(float64(4*s) * (0.8 + 0.4*0.999))},
		{s, 30 * s, 10, func() float64 { return 0 }, 24 * s},     // spread below the cap
		{s, 30 * s, 10, func() float64 { return 0.999 }, 30 * s}, // never above it
	} {
		if got := Delay(tc.base, tc.max, tc.doublings, tc.jitter); got != tc.want {
			t.Errorf("Delay(%v, %v, %d) = %v, want %v", tc.base, tc.max, tc.doublings, got, tc.want)
		}
	}
}
