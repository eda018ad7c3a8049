//go:build !windows

package ledger

import "os"

// OpenRead opens a ledger file for reading.
func OpenRead(path string) (*os.File, error) { return os.Open(path) }

// deletePending is false on Unix: a deleted file leaves its path at once.
func deletePending(*os.File) bool { return false }
