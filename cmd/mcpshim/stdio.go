package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcpshim-dev/mcpshim/lock"
)

// "-" is stdin or stdout where a command takes a file, as for cat and tar:
// ledger PATH (read), ledger report --html and lock --out (written).

// writeLock writes the lock to out, or to stdout for "-".
func writeLock(c *cli, l *lock.Lock, out string) error {
	if out != "-" {
		return l.Write(out)
	}
	data, err := l.Bytes()
	if err == nil {
		_, err = c.stdout.Write(data)
	}
	return err
}

// spoolStdin copies stdin into a file of a private temporary directory,
// which the ledger commands read like any ledger (they read it twice: a
// run's records after the table of runs). remove deletes both.
func spoolStdin(c *cli) (path string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "mcpshim-stdin-") // 0700
	if err != nil {
		return "", nil, fmt.Errorf("read stdin: %w", err)
	}
	remove = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "stdin.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = io.Copy(f, c.stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("read stdin: %w", err)
	}
	return path, remove, nil
}
