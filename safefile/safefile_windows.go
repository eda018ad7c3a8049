package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Windows has no O_NOFOLLOW, file owners are SIDs and ACLs decide who may
// write a directory. The nearest right thing without reading ACLs: refuse a
// symlink (or other reparse point) found by Lstat just before the open, and
// trust the directory, which under %LOCALAPPDATA% is the user's alone. The
// check and the open are two steps, so a link planted between them is not
// caught.

func ownedBySelf(fs.FileInfo) bool { return true }
func ownedByRoot(fs.FileInfo) bool { return false }

func checkDir(string, fs.FileInfo) (string, error) { return "", nil }

// OpenAppend opens path to append to it, creating it, unless path is a
// symlink or not a regular file.
func OpenAppend(path string) (*os.File, string, error) {
	note, err := Dir(filepath.Dir(path))
	if err != nil {
		return nil, note, err
	}
	if err := checkLink(path); err != nil {
		return nil, note, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	return f, note, err
}

// Read reads path unless it is a symlink or not a regular file.
func Read(path string) ([]byte, error) {
	if err := checkLink(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func checkLink(path string) error {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil // missing: the open says what is wrong
	case st.Mode()&fs.ModeSymlink != 0 || st.Mode()&fs.ModeIrregular != 0:
		return symlinkErr(path)
	case !st.Mode().IsRegular():
		return refuse("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return nil
}
