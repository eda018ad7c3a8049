//go:build !windows

package ownerfile

import (
	"fmt"
	"os"
)

// MkdirAll creates dir and its missing parents, 0700.
func MkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

// OpenAppend opens path for appending, creating it 0600.
func OpenAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// CreateTemp creates a new file in dir as os.CreateTemp does: 0600.
func CreateTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }

// WriteFile writes data to path, creating it 0600.
func WriteFile(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }

// Check says how path is open to others than its owner, or nil.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is %#o: others than its owner may read or write it", path, perm)
	}
	return nil
}
