//go:build unix

package oauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkParent refuses a token directory whose parent another user owns, or
// anyone may write to (unless it is sticky, as /tmp is): they could rename
// the directory away and put their own in its place. A parent not there
// yet is made by safefile.Dir, the user's own.
func checkParent(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(sys.Uid); uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("its parent %s belongs to another user (uid %d), who could put a directory of their own in its place; keep the tokens under a directory of yours (set XDG_CONFIG_HOME), or give %s back to yourself (chown)", dir, uid, dir)
	}
	if st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("its parent %s is writable by other users (mode %v), who could put a directory of their own in its place; chmod go-w %s, or keep the tokens elsewhere (set XDG_CONFIG_HOME)", dir, st.Mode().Perm(), dir)
	}
	return nil
}

// tryLock takes an exclusive flock on f without waiting; false when another
// process holds it. The kernel drops it when the holder dies.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
