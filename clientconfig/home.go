package clientconfig

import "runtime"

// Home is the home directory Find looks in: %USERPROFILE% on Windows (HOME
// is set there only by some shells), $HOME elsewhere.
func Home(getenv func(string) string) string {
	if h := getenv("USERPROFILE"); h != "" && runtime.GOOS == "windows" {
		return h
	}
	return getenv("HOME")
}
