//go:build unix

package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// writable refuses a file an editor would not write: its owner's write bit
// is off (root too respects that here, as vi's :w does without !), or this
// user may not write it at all (the rename would replace it anyway, since
// the directory is writable).
func writable(path string, st fs.FileInfo) error {
	if st.Mode().Perm()&0o200 == 0 {
		return readOnlyErr(path, st)
	}
	if err := unix.Access(path, unix.W_OK); err != nil {
		return fmt.Errorf("%s is not writable by you (mode %04o): %w", path, st.Mode().Perm(), ErrReadOnly)
	}
	return nil
}

// lockWait bounds the wait for another holder of the file's lock.
const lockWait = 10 * time.Second

// lockFile takes f's advisory lock (flock), which every mcpshim writing a
// config takes: two wraps never interleave. Editors do not take it; the
// checks around the swap cover them.
func lockFile(f *os.File) (unlock func(), err error) {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN) }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return func() {}, nil // a file system without flock: the checks remain
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is locked by another program (flock) for over %v; run again when it is done", f.Name(), lockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keepOwner gives tmp path's owner and group, as root must (wrap run with
// sudo on a user's 0600 file once left it root:root and locked the user
// out). A user who cannot give a file its owner and group (another user's
// file in a directory both can write) is refused: the rename would take it
// over.
func keepOwner(tmp *os.File, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := tmp.Chown(int(s.Uid), int(s.Gid)); err != nil {
		return fmt.Errorf("%s belongs to uid %d gid %d, which a rewrite by you could not keep (%v); ask its owner to run mcpshim", st.Name(), s.Uid, s.Gid, err)
	}
	return nil
}

// beforeSwap keeps f open: its flock holds until Replace returns.
func beforeSwap(*os.File) {}
