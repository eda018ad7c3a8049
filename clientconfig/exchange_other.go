//go:build !linux && !darwin

package clientconfig

// exchange cannot swap two names here: Replace renames after its last check.
func exchange(a, b string) error { return errNoExchange }
