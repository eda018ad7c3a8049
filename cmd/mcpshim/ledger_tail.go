package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/report"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// tailPoll is how often tail -f looks for new records: files are polled, the
// same way on every platform, and a ledger is small appends.
const tailPoll = 200 * time.Millisecond

// tailRecord is a record and its raw line, which tail --json prints as is.
type tailRecord struct {
	entry ledger.Entry
	line  []byte
}

// tail prints the latest records across all ledger files, oldest first, and
// with -f each new record as it is written (rotated and new files included)
// until ctx ends.
func (l *ledgerCmd) tail(ctx context.Context, args []string) int {
	var follow bool
	var n int
	pos, err := l.flags("tail", args, filterServer, func(fs *flag.FlagSet) {
		fs.BoolVar(&follow, "f", false, "keep printing new records as they are written")
		intFlag(fs, &n, "n", 20, 0, 1_000_000, "print the last `N` records first")
	})
	if err != nil {
		return usageStatus(err)
	}
	files, err := l.files(pos)
	if err != nil {
		return l.fail(err)
	}
	var last []tailRecord
	tracked := make([]*followedFile, 0, len(files))
	for _, path := range files {
		recs, f, err := readTail(path, n)
		if err != nil {
			fmt.Fprintf(l.c.stderr, "mcpshim ledger: %v\n", err)
			continue
		}
		last = append(last, recs...)
		tracked = append(tracked, f)
	}
	sortRecords(last)
	last = l.only(last)
	last = last[max(0, len(last)-n):]
	for i := range last {
		l.printRecord(&last[i])
	}
	if !follow {
		return 0
	}
	t := time.NewTicker(tailPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
		tracked = l.poll(pos, tracked)
	}
}

// only keeps the records of --server.
func (l *ledgerCmd) only(recs []tailRecord) []tailRecord {
	if l.server == "" {
		return recs
	}
	out := recs[:0]
	for _, r := range recs {
		if r.entry.Server == l.server {
			out = append(out, r)
		}
	}
	return out
}

func sortRecords(recs []tailRecord) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := &recs[i].entry, &recs[j].entry
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.Seq < b.Seq
	})
}

// followedFile is a ledger file being followed. It is known by identity, not
// name: a rotated file keeps being read under its new name, and off always
// sits at the start of a line.
type followedFile struct {
	info os.FileInfo
	off  int64
}

// readTail returns the last n records of path, reading back from its end
// in growing chunks, and where following it should start.
func readTail(path string, n int) ([]tailRecord, *followedFile, error) {
	f, err := ledger.OpenRead(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	size := fi.Size()
	for chunk := int64(64 << 10); ; chunk *= 4 {
		start := max(0, size-chunk)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		if start > 0 {
			buf = buf[bytes.IndexByte(buf, '\n')+1:] // from the first whole line
		}
		whole := buf[:bytes.LastIndexByte(buf, '\n')+1]
		recs := parseRecords(whole)
		if len(recs) >= n || start == 0 {
			end := size - int64(len(buf)-len(whole))
			return recs[max(0, len(recs)-n):], &followedFile{info: fi, off: end}, nil
		}
	}
}

// parseRecords reads the records of whole lines, keeping their text.
func parseRecords(data []byte) []tailRecord {
	var out []tailRecord
	s := ledger.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if e, err := s.Decode(); err == nil {
			out = append(out, tailRecord{e, bytes.Clone(s.Line())})
		}
	}
	return out
}

// poll reads what was appended to the tracked files since the last poll,
// and whole new files, and prints the new records in time order.
func (l *ledgerCmd) poll(paths []string, tracked []*followedFile) []*followedFile {
	files, err := l.quietFiles(paths)
	if err != nil {
		return tracked
	}
	var fresh []tailRecord
	next := make([]*followedFile, 0, len(files))
	for _, path := range files {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		ff := &followedFile{info: fi}
		for _, t := range tracked {
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
	sortRecords(fresh)
	fresh = l.only(fresh)
	for i := range fresh {
		l.printRecord(&fresh[i])
	}
	return next
}

// quietFiles is files without the "no ledger yet" note: tail -f may start
// before the first shim does.
func (l *ledgerCmd) quietFiles(paths []string) ([]string, error) {
	if len(paths) > 0 {
		return ledger.Files(paths)
	}
	return ledger.Files([]string{ledger.DefaultDir(l.c.getenv)})
}

// readFrom reads the whole lines of path between off and size and says how
// many bytes they took; a line still being written waits for the next poll.
func readFrom(path string, off, size int64) ([]tailRecord, int64) {
	f, err := ledger.OpenRead(path)
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
	return parseRecords(whole), int64(len(whole))
}

// printRecord prints one record: as its ledger line with --json, else as
// 15:04:05.000 server …run phase event key=value…
func (l *ledgerCmd) printRecord(r *tailRecord) {
	if l.json {
		l.c.stdout.Write(append(bytes.TrimRight(r.line, "\r\n"), '\n'))
		return
	}
	p := painter(l.color)
	e := &r.entry
	run := e.Run
	if len(run) > 10 {
		run = "…" + run[len(run)-6:]
	}
	origin := ""
	if e.Origin != "" {
		origin = p.paint(styleDim, " ["+termsafe.String(e.Origin)+"]")
	}
	fields := report.FieldsText(e, 80)
	if l.width > 0 { // the fields give way to the terminal's width
		plain := len("15:04:05.000") + utf8.RuneCountInString(fmt.Sprintf(" %s %s %s %s", e.Server, run, e.Phase, e.Event)) + 1
		if e.Origin != "" {
			plain += len(e.Origin) + 3
		}
		fields = report.OneLine(fields, max(l.width-plain, 12))
	}
	line := fmt.Sprintf("%s %s %s %s %s%s %s", p.paint(styleDim, e.Time.In(l.loc).Format("15:04:05.000")),
		p.paint(styleBold, termsafe.String(e.Server)), termsafe.String(run), termsafe.String(string(e.Phase)), p.paint(eventStyle(e), termsafe.String(e.Event)), origin, fields)
	fmt.Fprintln(l.c.stdout, strings.TrimRight(line, " "))
}
