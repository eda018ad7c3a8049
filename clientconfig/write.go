package clientconfig

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

var (
	// ErrChanged is Replace finding that the file no longer holds old.
	ErrChanged = errors.New("the file changed since it was read; nothing written, run again")
)

// Replace puts data in path's place, atomically and with path's permissions,
// after keeping old, the bytes data was made from, in path.mcpshim.bak. It
// returns ErrChanged, writing nothing over path, when path no longer holds
// old. path must not be a symlink (resolve it first: a rename would replace
// the link).
func Replace(path string, old, data []byte) (backup string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	backup = path + ".mcpshim.bak"
	if err := writeAtomic(backup, old, fi.Mode().Perm()); err != nil {
		return "", err
	}
	// Clients rewrite their own configs (Claude Code keeps its state in
	// ~/.claude.json): never overwrite a change made since it was read.
	if cur, err := os.ReadFile(path); err != nil || !bytes.Equal(cur, old) {
		return "", ErrChanged
	}
	return backup, writeAtomic(path, data, fi.Mode().Perm())
}

// writeAtomic writes a temp file beside path and renames it over path, so a
// reader sees the old bytes or the new ones, never a part.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up on failure
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
