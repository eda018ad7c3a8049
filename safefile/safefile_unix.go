//go:build unix

package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

func owner(st fs.FileInfo) (uint32, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return s.Uid, true
}

func ownedBySelf(st fs.FileInfo) bool {
	uid, ok := owner(st)
	return ok && int(uid) == os.Geteuid()
}

func ownedByRoot(st fs.FileInfo) bool {
	uid, ok := owner(st)
	return ok && uid == 0
}

func checkDir(dir string, st fs.FileInfo) (string, error) {
	others := st.Mode().Perm() & 0o022
	switch {
	case ownedBySelf(st):
		if others == 0 || st.Mode()&fs.ModeSticky != 0 {
			return "", nil
		}
		mode := st.Mode().Perm() &^ 0o022
		if err := os.Chmod(dir, mode); err != nil {
			return "", refuse("%s is writable by other users (mode %04o) and cannot be made private: %v", dir, st.Mode().Perm(), err)
		}
		return fmt.Sprintf("%s was writable by other users (mode %04o); made it %04o", dir, st.Mode().Perm(), mode), nil
	case ownedByRoot(st):
		if others != 0 && st.Mode()&fs.ModeSticky == 0 {
			return "", refuse("%s is writable by other users (mode %04o) and is not yours; choose a directory of your own", dir, st.Mode().Perm())
		}
		return "", nil
	}
	uid, _ := owner(st)
	return "", refuse("%s belongs to another user (uid %d); choose a directory of your own", dir, uid)
}

// OpenAppend opens path to append to it, creating it 0600, in a directory
// checked as by Dir. It never follows a symlink at path (O_NOFOLLOW) and,
// having opened it, accepts only a regular file the user owns; one of the
// user's that others can read or write is made 0600 and note says so.
func OpenAppend(path string) (f *os.File, note string, err error) {
	note, err = Dir(filepath.Dir(path))
	if err != nil {
		return nil, note, err
	}
	// O_NONBLOCK: a FIFO planted at path must not hang the opener.
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) { // EMLINK: FreeBSD's word for it
		return nil, note, symlinkErr(path)
	}
	if err != nil {
		return nil, note, err
	}
	st, err := f.Stat()
	if err == nil {
		err = checkFile(path, st)
	}
	if err != nil {
		f.Close()
		return nil, note, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && st.Mode().IsRegular() {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, note, refuse("%s can be read by other users (mode %04o) and cannot be made private: %v", path, perm, err)
		}
		note = join(note, fmt.Sprintf("%s could be read by other users (mode %04o); made it 0600", path, perm))
	}
	return f, note, nil
}

// checkFile accepts what was opened: a regular file of the user's, or a
// character device named on purpose (/dev/null; only root can make one).
func checkFile(path string, st fs.FileInfo) error {
	if st.Mode()&fs.ModeCharDevice != 0 {
		return nil
	}
	if !st.Mode().IsRegular() {
		return refuse("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if !ownedBySelf(st) {
		uid, _ := owner(st)
		return refuse("%s belongs to another user (uid %d); remove it, or choose another path", path, uid)
	}
	return nil
}

// Read reads path, never through a symlink: a cache or state file another
// user could plant a link at is read only when it is the user's own regular file.
func Read(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, symlinkErr(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil {
		err = checkFile(path, st)
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// mkdirAll creates dir and its missing parents, 0700.
func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

// createTemp creates a new file in dir as os.CreateTemp does, 0600.
func createTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }

// CheckPrivate says how path is open to others than its owner, or nil.
func CheckPrivate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is %#o: others than its owner may read or write it", path, perm)
	}
	return nil
}

// Rename renames from over to (os.Rename).
func Rename(from, to string) error { return os.Rename(from, to) }

// OpenShared opens path to read it. Unix lets others rename and delete an
// open file; the Windows one shares every access to allow the same.
func OpenShared(path string) (*os.File, error) { return os.Open(path) }
