// Package backoff owns the reconnect policy's delay, shared by the restarts
// of a stdio server (supervisor) and the reconnects to a remote one (remote):
// base doubled once per retry after the first, capped, spread by ±20%. It
// knows no process, no connection and no clock.
package backoff

import "time"

// Delay is base doubled doublings times, capped at max, then spread by
// ±20% with jitter (a value in [0,1); nil for none) and capped again.
// The doubling stops at the cap, so a long crash loop cannot overflow; the
// cap comes before the spread too, so retries stuck at the cap still spread
// out (24-30 s with a 30 s cap).
func Delay(base, max time.Duration, doublings int, jitter func() float64) time.Duration {
	d := base
	for i := 0; i < doublings && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	if jitter != nil {
		d = time.Duration(float64(d) * (0.8 + 0.4*jitter()))
	}
	return min(d, max)
}
