//go:build race

package testkit

// raceEnabled: the test binary was built with -race, so the shim the
// tests start is built with it too.
const raceEnabled = true
