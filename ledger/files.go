package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Files lists the ledger files named by paths, each once: a file as given, a
// directory as every *.jsonl directly in it. Rotated files of a ledger come
// before the live one, oldest first, so records come out in about the order
// they were written. A path that does not exist is an error.
func Files(paths []string) ([]string, error) {
	var out []string
	var seen []os.FileInfo
	add := func(path string, fi os.FileInfo) {
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return
			}
		}
		seen = append(seen, fi)
		out = append(out, path)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", p, err)
		}
		if !fi.IsDir() {
			add(p, fi)
			continue
		}
		names, err := filepath.Glob(filepath.Join(p, "*.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", p, err)
		}
		sort.Slice(names, func(i, j int) bool {
			bi, ti := SplitRotated(names[i])
			bj, tj := SplitRotated(names[j])
			if bi != bj {
				return bi < bj
			}
			if ti.IsZero() != tj.IsZero() {
				return tj.IsZero() // the live file last
			}
			return ti.Before(tj)
		})
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil && fi.Mode().IsRegular() {
				add(n, fi)
			}
		}
	}
	return out, nil
}

// SplitRotated undoes RotatedName: it returns the live ledger's path and the
// rotation time, or path itself and the zero time for a live ledger.
func SplitRotated(path string) (live string, rotated time.Time) {
	base := strings.TrimSuffix(path, ".jsonl")
	dot := strings.LastIndexByte(base, '.')
	if dot < 0 {
		return path, time.Time{}
	}
	// The stamp itself holds a dot: name.20261129T154000.123Z
	if d := strings.LastIndexByte(base[:dot], '.'); d >= 0 {
		// The stamp ends in Z; rotate's -PID and -N follow it.
		stamp := strings.TrimRight(base[d+1:], "0123456789-")
		if t, err := time.Parse("20060102T150405.000Z", stamp); err == nil {
			return base[:d] + ".jsonl", t
		}
	}
	return path, time.Time{}
}
