package clientconfig

import (
	"io/fs"
	"os"
)

// writable refuses a read-only file, as an editor would. Windows keeps
// who may write in ACLs; the read-only attribute is what Go's mode shows.
func writable(path string, st fs.FileInfo) error {
	if st.Mode().Perm()&0o200 == 0 {
		return readOnlyErr(path, st)
	}
	return nil
}

// lockFile takes no lock on Windows yet (LockFileEx would be the nearest
// thing to flock); the checks around the rename remain.
func lockFile(*os.File) (func(), error) { return func() {}, nil }

// keepOwner does nothing on Windows: a renamed file keeps the directory's
// inherited ACL, and there is no owner/group pair to copy.
func keepOwner(*os.File, fs.FileInfo) error { return nil }

// beforeSwap closes f: Windows refuses to rename over a file that is open,
// even one opened sharing delete access (MoveFileEx without POSIX semantics).
func beforeSwap(f *os.File) { f.Close() }
