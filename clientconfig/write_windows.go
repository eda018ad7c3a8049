package clientconfig

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
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

// openShared opens path to read it, letting others delete and rename it
// while Replace holds it (a client rewriting its config as it does).
func openShared(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// beforeSwap closes f: Windows refuses to rename over a file that is open,
// even one opened sharing delete access (MoveFileEx without POSIX semantics).
func beforeSwap(f *os.File) { f.Close() }
