//go:build !windows

package ledger

import "os"

// deletePending is false on Unix: a deleted file leaves its path at once.
func deletePending(*os.File) bool { return false }
