package clientconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/safefile"
)

var (
	// ErrChanged is Replace finding that the file no longer holds old.
	ErrChanged = errors.New("the file changed since it was read; nothing written, run again")
	// ErrReadOnly is Replace refusing a file its owner made read-only, as an editor would.
	ErrReadOnly = errors.New("read-only")
)

// BackupPath is where Replace keeps the bytes a rewrite of file replaced: in
// dir, mcpshim's own state directory, never beside the file (a project's
// .mcp.json sits in a folder that is often shared or committed, and the
// backup holds its secrets). The name says which file (its base name and a
// digest of its absolute path), when, and which command (kind) replaced it,
// so a backup never overwrites another: unwrap's never replaces the
// original that wrap kept.
func BackupPath(dir, file, kind string, now time.Time) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	sum := sha256.Sum256([]byte(abs))
	base := strings.TrimPrefix(filepath.Base(file), ".")
	name := fmt.Sprintf("%s.%s.%s.%s.bak", base, hex.EncodeToString(sum[:4]), now.UTC().Format("20060102T150405.000Z"), kind)
	return filepath.Join(dir, name)
}

// Replace puts data in path's place, atomically, with path's owner, group
// and mode, after keeping old, the bytes data was made from, in backup (0600,
// in a directory only its owner can write; an existing backup is never
// overwritten). path must be the file itself (resolve a symlink first: a
// rename would replace the link). Nothing is written, and an error says why,
// when:
//   - path is read-only (its owner's write bit is off; ErrReadOnly), or this
//     user may not write it: an editor refuses it too;
//   - its owner or group cannot be kept (a file of another user's);
//   - it no longer holds old (ErrChanged): clients rewrite their own configs
//     (Claude Code keeps its state in ~/.claude.json), and such an edit must
//     never be lost.
//
// The check is made under an advisory lock (flock, which another mcpshim
// takes too) right before the file is swapped in, and checked again after:
// where the platform can exchange two names atomically (Linux, macOS), the
// file swapped out must be the one read, or it is swapped back. A program
// that writes the file in place through a descriptor it opened before the
// swap still writes to the old file; no rename can see that.
func Replace(path string, old, data []byte, backup string) error {
	f, err := safefile.OpenShared(path) // others may rename and delete it meanwhile, as clients do
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err := writable(path, st); err != nil {
		return err
	}
	unlock, err := lockFile(f)
	if err != nil {
		return err
	}
	defer unlock()
	if err := unchanged(path, st, old); err != nil {
		return err
	}
	if _, err := safefile.Dir(filepath.Dir(backup)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(backup); err == nil {
		return fmt.Errorf("backup %s exists; run again", backup)
	}
	if err := safefile.Write(backup, old, 0o600); err != nil {
		return fmt.Errorf("backup: %w", err)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the swap it holds the replaced file, whose bytes are in backup
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(st.Mode().Perm())
	}
	if err == nil {
		err = keepOwner(tmp, st)
	}
	if err == nil {
		err = tmp.Sync()
	}
	var ours fs.FileInfo
	if err == nil {
		ours, err = tmp.Stat()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// The last look before the swap: the gap between a check and a rename
	// once lost 4 edits in 150 runs.
	if err := unchanged(path, st, old); err != nil {
		return err
	}
	beforeSwap(f)
	switch err := exchange(tmp.Name(), path); {
	case errors.Is(err, errNoExchange):
		return safefile.Rename(tmp.Name(), path)
	case err != nil:
		return err
	}
	if err := unchanged(tmp.Name(), st, old); err != nil {
		// Someone replaced the file between the last look and the swap:
		// put theirs back, unless yet another write replaced ours since.
		if now, serr := os.Lstat(path); serr == nil && os.SameFile(now, ours) {
			exchange(tmp.Name(), path)
			if now, serr := os.Lstat(tmp.Name()); serr == nil && !os.SameFile(now, ours) {
				exchange(tmp.Name(), path) // a newer write landed in between: it goes back in place
			}
		}
		return err
	}
	return nil
}

// Writable reports why Replace would refuse to rewrite path (read-only, or
// not this user's to write), so that a command can refuse before it writes
// any of several files.
func Writable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return writable(path, st)
}

// unchanged checks that path is still the file st describes and holds old.
func unchanged(path string, st fs.FileInfo, old []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return ErrChanged
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil || !os.SameFile(now, st) || now.Size() != int64(len(old)) {
		return ErrChanged
	}
	cur, err := io.ReadAll(io.LimitReader(f, int64(len(old))+1))
	if err != nil || !bytes.Equal(cur, old) {
		return ErrChanged
	}
	return nil
}

// errNoExchange is exchange on a platform that cannot swap two names.
var errNoExchange = errors.New("no atomic exchange here")

func readOnlyErr(path string, st fs.FileInfo) error {
	return fmt.Errorf("%s is read-only (mode %04o), so it is left alone, as an editor would; "+
		"make it writable (chmod u+w) to let mcpshim rewrite it: %w", path, st.Mode().Perm(), ErrReadOnly)
}
