//go:build !windows

package safefile

import (
	"os"
	"testing"
)

// openToAll creates path readable and writable by everyone.
func openToAll(t *testing.T, path string) string {
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}
