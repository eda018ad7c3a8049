// Package safefile opens, reads and replaces the files mcpshim keeps for its
// user (ledgers, the probe cache, locks, export state, config backups) so that
// another user of the machine cannot redirect or read them.
//
// A file is never written through a symbolic link (server stderr appended to
// a planted NAME.jsonl link once landed in a shell rc file), is a regular file
// the user owns, and lives in a directory only its owner (or, for a sticky
// one such as /tmp, the owner of each file) can change. It knows nothing of
// what the files hold.
//
// What it creates is its owner's only: 0600 files and 0700 directories on
// Unix; on Windows, where modes mean nothing, a protected DACL granting the
// user, SYSTEM and Administrators, which is what the user's profile
// directories (%LOCALAPPDATA%) grant, made explicit so that a file elsewhere
// does not take a wider list from its directory. CheckPrivate says whether a
// file is so.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrUnsafe is the error of every refusal: a symlink, a file that is not
// regular or not the user's, a directory another user controls.
var ErrUnsafe = errors.New("unsafe path")

// unsafeErr is a refusal whose message says what was found and what to do.
type unsafeErr struct{ msg string }

func (e *unsafeErr) Error() string        { return e.msg }
func (e *unsafeErr) Is(target error) bool { return target == ErrUnsafe }

func refuse(format string, args ...any) error {
	return &unsafeErr{fmt.Sprintf(format, args...)}
}

// symlinkErr describes the symlink at path, naming where it points.
func symlinkErr(path string) error {
	to, err := os.Readlink(path)
	if err != nil {
		to = "?"
	}
	return refuse("%s is a symbolic link (to %s); mcpshim never writes through one: remove it, or choose another path", path, to)
}

// Dir makes sure dir can hold the user's files: a missing directory is
// created 0700 (with its parents); an existing one must be a directory owned
// by the user or by root. One of the user's that group or others can write
// is repaired (their write bits removed) and note says so; one another user
// owns, or root's that others can write without the sticky bit, is refused.
// A sticky directory (/tmp) is accepted: there others can neither remove nor
// rename a file they do not own, and OpenAppend refuses theirs.
func Dir(dir string) (note string, err error) {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", mkdirAll(dir)
	}
	if err != nil {
		return "", err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		// A link to a directory is the user's own arrangement (a state
		// directory on another disk) when the user owns the link; what it
		// points at is checked as the directory.
		if !ownedBySelf(st) && !ownedByRoot(st) {
			return "", refuse("%s is a symbolic link owned by another user; refusing to keep files behind it", dir)
		}
		if st, err = os.Stat(dir); err != nil {
			return "", err
		}
	}
	if !st.IsDir() {
		return "", refuse("%s is not a directory", dir)
	}
	return checkDir(dir, st)
}

// Write replaces path with data atomically, mode perm: a new file created
// beside it (O_EXCL, so never through a link) is renamed over it, and a
// reader sees the old bytes or the new ones. A symlink at path is refused
// rather than replaced. The directory is the caller's to check (Dir): a
// project's lock file lives in a directory that is not mcpshim's to repair.
func Write(path string, data []byte, perm fs.FileMode) error {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&fs.ModeSymlink != 0 {
			return symlinkErr(path)
		}
		if !st.Mode().IsRegular() {
			return refuse("%s is not a regular file", path)
		}
	}
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up on failure
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return Rename(tmp.Name(), path)
}
