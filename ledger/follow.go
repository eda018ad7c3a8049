package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/mcpshim-dev/mcpshim/safefile"
)

// OpenRead opens a ledger file for reading, sharing every access: a reader
// (ledger tail -f) must not keep the shims writing it from rotating it.
func OpenRead(path string) (*os.File, error) { return safefile.OpenShared(path) }

// FilesOrDefault resolves paths as Files does, or when there are none the
// ledger the shims write by default: $MCPSHIM_LEDGER (a file or a directory,
// as the shim's --ledger reads it), else the default directory. A default
// that does not exist yet is no ledger yet: no files and no error, with its
// path in noneYet.
func FilesOrDefault(paths []string, getenv func(string) string) (files []string, noneYet string, err error) {
	if len(paths) > 0 {
		files, err = Files(paths)
		return files, "", err
	}
	dir := DefaultDir(getenv)
	if env := getenv("MCPSHIM_LEDGER"); env != "" && env != "off" {
		dir = env
	}
	files, err = Files([]string{dir})
	if errors.Is(err, os.ErrNotExist) {
		return nil, dir, nil
	}
	return files, "", err
}

// Tailed is a record read back with its line, which tail --json prints as is.
type Tailed struct {
	Entry Entry
	Line  []byte
}

// Follower follows ledger files as they grow. A file is known by identity,
// not name: a rotated file keeps being read under its new name.
type Follower struct {
	files []followed
}

type followed struct {
	info os.FileInfo
	off  int64 // always at the start of a line
}

// Last returns the last n records of each file, oldest first across them,
// and a Follower that starts after them. A file that cannot be read is left
// out and its error returned.
func Last(files []string, n int) ([]Tailed, *Follower, []error) {
	var (
		last []Tailed
		errs []error
		fol  = &Follower{files: make([]followed, 0, len(files))}
	)
	for _, path := range files {
		recs, f, err := readLast(path, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		last = append(last, recs...)
		fol.files = append(fol.files, f)
	}
	sortTailed(last)
	return last, fol, errs
}

// Poll returns, oldest first, what was appended to the followed files since
// the last call, and whole new files among files (files replaces what is
// followed). A line still being written waits for the next Poll.
func (fol *Follower) Poll(files []string) []Tailed {
	var fresh []Tailed
	next := make([]followed, 0, len(files))
	for _, path := range files {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		ff := followed{info: fi}
		for _, t := range fol.files {
			if os.SameFile(t.info, fi) {
				ff.off = t.off
				break
			}
		}
		if fi.Size() < ff.off {
			ff.off = 0 // truncated: start again
		}
		if fi.Size() > ff.off {
			recs, read := readFrom(path, ff.off, fi.Size())
			ff.off += read
			fresh = append(fresh, recs...)
		}
		next = append(next, ff)
	}
	fol.files = next
	sortTailed(fresh)
	return fresh
}

func sortTailed(recs []Tailed) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := &recs[i].Entry, &recs[j].Entry
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.Seq < b.Seq
	})
}

// readLast returns the last n records of path, reading back from its end
// in growing chunks, and where following it should start.
func readLast(path string, n int) ([]Tailed, followed, error) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, followed{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, followed{}, fmt.Errorf("read %s: %w", path, err)
	}
	size := fi.Size()
	for chunk := int64(64 << 10); ; chunk *= 4 {
		start := max(0, size-chunk)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, followed{}, fmt.Errorf("read %s: %w", path, err)
		}
		if start > 0 {
			buf = buf[bytes.IndexByte(buf, '\n')+1:] // from the first whole line
		}
		whole := buf[:bytes.LastIndexByte(buf, '\n')+1]
		recs := parseTailed(whole)
		if len(recs) >= n || start == 0 {
			end := size - int64(len(buf)-len(whole))
			return recs[max(0, len(recs)-n):], followed{info: fi, off: end}, nil
		}
	}
}

// readFrom reads the whole lines of path between off and size and says how
// many bytes they took.
func readFrom(path string, off, size int64) ([]Tailed, int64) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	buf := make([]byte, size-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, 0
	}
	whole := buf[:bytes.LastIndexByte(buf[:n], '\n')+1]
	return parseTailed(whole), int64(len(whole))
}

// parseTailed reads the records of whole lines, keeping their text.
func parseTailed(data []byte) []Tailed {
	var out []Tailed
	s := NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if e, err := s.Decode(); err == nil {
			out = append(out, Tailed{e, bytes.Clone(s.Line())})
		}
	}
	return out
}
