//go:build race

package remote_test

// Under -race the shim binary is built with the race detector too: the
// bridge's goroutines are what the detector should see.
func init() { buildFlags = append(buildFlags, "-race") }
