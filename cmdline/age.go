package cmdline

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ParseAge reads 30d, 2w, 12h, 90m or any Go duration.
func ParseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			v, err := strconv.ParseFloat(s[:n-1], 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("want a number before %q", s[n-1:])
			}
			return time.Duration(v * float64(u)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want an age such as 30d, 12h or 90m")
	}
	return d, nil
}

// ParseSince reads an age back from now (2h, 3d) or a time: RFC 3339, or
// a local date and time such as 2026-11-29T08:00 or 2026-11-29.
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if d, err := ParseAge(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want an age (2h, 3d) or a time (2026-11-29T08:00)")
}
