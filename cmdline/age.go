package cmdline

import (
	"fmt"
	"strconv"
	"time"
)

// ParseAge reads an age as a person types it: 30d, 2w, 12h, 90m or any Go
// duration.
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
