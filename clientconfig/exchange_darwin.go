package clientconfig

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b atomically (renamex_np RENAME_SWAP,
// on APFS and HFS+).
func exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoExchange
	}
	return err
}
