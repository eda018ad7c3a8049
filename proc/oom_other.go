//go:build !linux

package proc

import "errors"

// oomFile: only Linux counts OOM kills per cgroup.
func oomFile(int) (string, error) {
	return "", errors.New("no cgroup OOM count on this system")
}
