package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpshim-dev/mcpshim/safefile"
	"github.com/mcpshim-dev/mcpshim/termsafe"
	"github.com/rs/zerolog"
)

// DefaultMaxSize is the size past which a ledger file is rotated.
const DefaultMaxSize = 64 << 20

// Options configures a Ledger.
type Options struct {
	Path    string // the JSON-lines file; "" disables the file
	Shim    string // id of this mcpshim invocation
	Server  string // the server's label
	MaxSize int64  // rotate past this size; 0 means DefaultMaxSize

	// Events receives one readable line per record; nil for --quiet.
	Events io.Writer
	// JSON prints events on Events as JSON lines instead of text.
	JSON bool
	// Color colours text events (only on a terminal, never with NO_COLOR).
	Color bool
	// Notices receives the ledger's own lines (cannot open, repaired,
	// reopened), also with --quiet; nil sends them to Events.
	Notices io.Writer
	// OnRecord, when set, sees every record after it was written (redacted
	// exactly as on disk). It runs on the recorder's goroutine and must not
	// block: an exporter queues and drops.
	OnRecord func(*Record)
}

// Ledger appends records to a file and prints them. It is not safe for
// concurrent use: one goroutine (the Recorder's) owns it.
//
// Every record is written whole in one write(2) on an O_APPEND file (between
// Hold and Flush, several records in one), so several shims can share a
// directory or even a file without interleaving inside a record. When the
// file cannot be opened or written the session carries on: one stderr line
// says so and where, and the lost records are counted and written once
// writing works.
type Ledger struct {
	opts    Options
	f       *os.File
	size    int64
	seq     uint64
	lost    uint64 // records not written since the last records_lost
	skipped uint64 // of those, the ones that never got a seq: their numbers are left out
	failing bool   // the last write failed; said once on stderr
	opened  os.FileInfo
	checked time.Time // when the path was last compared with the open file
	buf     bytes.Buffer
	enc     zerolog.Logger // writes to buf
	ts      []byte         // the time's scratch for enc
	stamp   stamp
	line    bytes.Buffer

	held    bool         // between Hold and Flush
	file    bytes.Buffer // held records for the file
	fileN   uint64       // how many
	console bytes.Buffer // held JSON event lines
	lines   []heldLine   // held event lines, in order: printed at Flush
}

// heldLine is the event line of a held record: a text line is formatted at
// Flush, so that a line left out (Unprint) costs no formatting.
type heldLine struct {
	seq        uint64
	rec        Record // text
	start, end int    // JSON: the line in console
	drop       bool
}

// DefaultPath returns <name>.jsonl in DefaultDir.
func DefaultPath(getenv func(string) string, name string) string {
	return PathIn(DefaultDir(getenv), name)
}

// PathIn is the ledger of the server called name in dir: dir/FileName(name).jsonl,
// always directly inside dir whatever the name (--name ../../x once wrote
// two directories up).
func PathIn(dir, name string) string {
	return filepath.Join(dir, FileName(name)+".jsonl")
}

// fileSafe replaces each run of bytes other than letters, digits, '.', '_'
// and '-' with one '-': what the regexp [^A-Za-z0-9._-]+ did, without
// compiling one at every shim's start. A byte outside ASCII is never safe,
// so a run of runes (or of invalid UTF-8) is one run, as it was.
func fileSafe(name string) string {
	b := make([]byte, 0, len(name))
	run := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			b, run = append(b, c), false
		} else if !run {
			b, run = append(b, '-'), true
		}
	}
	return string(b)
}

// maxFileName leaves room under the usual 255-byte limit for ".jsonl" and a
// rotation stamp.
const maxFileName = 160

// FileName maps a server name to a safe file name: letters, digits, '.', '_'
// and '-' only (so no separator and no control), no leading dot or dash (so
// neither hidden, nor "..", nor a flag), no trailing dot (NTFS drops it), no
// Windows device name (CON, NUL, COM1…), never empty, and short enough for
// any file system; a long name keeps its start and a digest of the whole, so
// two long names stay apart.
func FileName(name string) string {
	s := strings.Trim(fileSafe(name), "-.")
	if len(s) > maxFileName {
		sum := sha256.Sum256([]byte(name))
		s = s[:maxFileName-9] + "-" + hex.EncodeToString(sum[:4])
	}
	if s == "" {
		return "server"
	}
	if base, _, _ := strings.Cut(s, "."); reservedOnWindows[strings.ToUpper(base)] {
		s = "_" + s // NUL.jsonl is the null device on Windows, whatever the extension
	}
	return s
}

// reservedOnWindows are the device names no Windows file may have.
var reservedOnWindows = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true}

// Open opens the ledger, creating its directories and file for their owner
// only (0700 and 0600; see safefile for Windows).
// It always returns a usable Ledger; the error says why the file is off.
func Open(opts Options) (*Ledger, error) {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	l := &Ledger{opts: opts, ts: make([]byte, 0, len(time.RFC3339Nano))}
	l.enc = zerolog.New(&l.buf)
	if opts.Path == "" {
		return l, nil
	}
	if err := l.open(); err != nil {
		l.failing = true
		l.say("ledger %s cannot be opened: %v; the session carries on without it", opts.Path, err)
		return l, err
	}
	return l, nil
}

// open opens the file at the ledger's path, never through a symlink and
// only in a directory no other user controls (safefile); what it had to
// repair for that is said on stderr.
func (l *Ledger) open() error {
	f, note, err := safefile.OpenAppend(l.opts.Path)
	if note != "" {
		l.say("%s", note)
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size, l.opened, l.checked = f, st.Size(), st, time.Now()
	return nil
}

// checkEvery is how often the ledger's path is compared with the open file.
const checkEvery = 2 * time.Second

// reopenIfMoved notices that the file at the ledger's path is no longer the
// one open (deleted, renamed away, replaced), says so, and reopens the path:
// records written to an unlinked inode are lost to every reader. It looks at
// most every checkEvery, on the recorder's goroutine, before a write.
func (l *Ledger) reopenIfMoved() {
	if time.Since(l.checked) < checkEvery {
		return
	}
	l.checked = time.Now()
	if st, err := os.Stat(l.opts.Path); err == nil && os.SameFile(st, l.opened) && !deletePending(l.f) {
		return
	}
	l.say("ledger %s was deleted or replaced (by hand, logrotate or another shim's rotation); reopening it (records of up to the last %v went to the old file)", l.opts.Path, checkEvery)
	l.f.Close()
	l.f = nil
	if err := l.open(); err != nil {
		l.say("ledger %s: cannot reopen: %v; lost records are counted", l.opts.Path, err)
	}
}

// Lost reports how many records were not written and not yet accounted for.
func (l *Ledger) Lost() uint64 { return l.lost }

// Skip accounts for records that never reached the ledger (a full queue):
// their count is written as records_lost with the next record, after a gap
// of as many seq numbers, so that a reader sees where they were lost.
func (l *Ledger) Skip(n uint64) {
	if n == 0 {
		return
	}
	l.lost += n
	l.skipped += n
}

// Hold makes the following records wait in memory until Flush, which writes
// them in one write(2) per destination: what one poll of the recorder
// collected costs one write to the file and one to the log.
func (l *Ledger) Hold() { l.held = true }

// Unprint leaves out the event line of the record numbered seq if it is
// still held: the record is in the file, its line is not printed. Once
// printed, a line stays.
func (l *Ledger) Unprint(seq uint64) {
	for i := len(l.lines) - 1; i >= 0 && l.lines[i].seq >= seq; i-- {
		if l.lines[i].seq == seq {
			l.lines[i].drop = true
			return
		}
	}
}

// Flush writes the held records and ends Hold.
func (l *Ledger) Flush() {
	l.held = false
	if len(l.lines) > 0 {
		l.line.Reset()
		for i := range l.lines {
			h := &l.lines[i]
			switch {
			case h.drop:
			case l.opts.JSON:
				l.line.Write(l.console.Bytes()[h.start:h.end])
			default:
				formatConsole(&l.line, &h.rec, l.opts.Color, &l.stamp)
			}
		}
		if l.line.Len() > 0 {
			l.opts.Events.Write(l.line.Bytes()) // one Write: never spliced into a server stderr line
		}
		clear(l.lines) // the records' fields are garbage now
		l.lines = l.lines[:0]
		l.console.Reset()
	}
	if l.file.Len() > 0 {
		n := l.fileN
		l.fileN = 0
		l.appendN(l.file.Bytes(), n)
		l.file.Reset()
	}
}

// Write stamps r (seq, and shim, server and time when unset), appends it to
// the file and prints it.
func (l *Ledger) Write(r *Record) {
	if l.lost > 0 && l.f != nil && !l.failing {
		l.writeLost(r.Run, r.PID)
	}
	l.seq++
	r.Seq = l.seq
	if r.Shim == "" {
		r.Shim = l.opts.Shim
	}
	if r.Server == "" {
		r.Server = l.opts.Server
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if l.opts.Path == "" && l.opts.Events == nil && l.opts.OnRecord == nil {
		return // --ledger off --quiet: nobody reads it
	}
	l.buf.Reset()
	r.encode(l.enc, &l.stamp, l.ts)
	if l.buf.Len() > MaxLine {
		r.fit(&l.buf, func() {
			l.buf.Reset()
			r.encode(l.enc, &l.stamp, l.ts)
		})
	}
	l.print(r, l.buf.Bytes())
	l.append(l.buf.Bytes())
	if l.held && l.file.Len() > 64<<10 {
		l.Flush()
		l.held = true
	}
	if l.opts.OnRecord != nil {
		l.opts.OnRecord(r)
	}
}

func (l *Ledger) writeLost(run string, pid int) {
	n := l.lost
	l.lost = 0
	l.seq += l.skipped + 1
	l.skipped = 0
	r := Record{Time: time.Now(), Shim: l.opts.Shim, Server: l.opts.Server, Run: run, PID: pid, Seq: l.seq,
		Phase: PhaseLedger, Event: RecordsLost, Fields: []Field{F("count", n)}}
	var b bytes.Buffer
	r.Encode(&b)
	l.print(&r, b.Bytes())
	l.append(b.Bytes())
}

func (l *Ledger) append(line []byte) {
	if l.opts.Path == "" {
		return
	}
	if l.held {
		l.file.Write(line)
		l.fileN++
		return
	}
	l.appendN(line, 1)
}

// appendN writes n whole records in one write.
func (l *Ledger) appendN(line []byte, n uint64) {
	if l.f != nil {
		l.reopenIfMoved()
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			l.lost += n
			return
		}
	}
	w, err := l.f.Write(line)
	l.size += int64(w)
	if err != nil {
		l.lost += n
		if !l.failing {
			l.failing = true
			l.say("ledger %s: write failed: %v; the session carries on, lost records are counted", l.opts.Path, err)
		}
		return
	}
	if l.failing {
		l.failing = false
		l.say("ledger %s: writing again", l.opts.Path)
	}
	if l.size > l.opts.MaxSize {
		l.rotate()
	}
}

// rotate renames a full ledger with a timestamp; readers read rotated files too.
//
// Two shims sharing the file may rotate it in the same millisecond: the
// name each renames to ends with its own process id, so that neither
// rename can replace the other's rotated file (a rename replaces its
// target); a shim that lost the race renames the other's fresh file, which
// loses nothing either.
func (l *Ledger) rotate() {
	// Another shim sharing the file may have rotated it already.
	if st, err := os.Stat(l.opts.Path); err == nil && st.Size() > l.opts.MaxSize {
		stamp := strings.TrimSuffix(RotatedName(l.opts.Path, time.Now()), ".jsonl")
		to := fmt.Sprintf("%s-%d.jsonl", stamp, os.Getpid())
		for i := 2; fileExists(to); i++ { // never replace an earlier rotation of this shim's
			to = fmt.Sprintf("%s-%d-%d.jsonl", stamp, os.Getpid(), i)
		}
		_ = os.Rename(l.opts.Path, to)
	}
	l.f.Close()
	l.f = nil
	if err := l.open(); err != nil {
		l.say("ledger %s: cannot reopen after rotation: %v", l.opts.Path, err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// RotatedName is where a full ledger file goes: name.20261129T154000.123Z.jsonl
// (rotate adds -PID, and -N for a second rotation in the same millisecond).
func RotatedName(path string, now time.Time) string {
	base := strings.TrimSuffix(path, ".jsonl")
	return base + "." + now.UTC().Format("20060102T150405.000Z") + ".jsonl"
}

// Close flushes the lost count and closes the file.
func (l *Ledger) Close() error {
	l.Flush()
	if l.lost > 0 && l.f != nil {
		l.writeLost("", 0)
	}
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

func (l *Ledger) say(format string, args ...any) {
	w := l.opts.Notices
	if w == nil {
		w = l.opts.Events
	}
	if w == nil {
		return
	}
	fmt.Fprintf(w, "mcpshim: "+format+"\n", args...)
}

func (l *Ledger) print(r *Record, line []byte) {
	if l.opts.Events == nil {
		return
	}
	if l.held {
		h := heldLine{seq: r.Seq}
		if l.opts.JSON {
			h.start = l.console.Len()
			l.console.Write(line)
			h.end = l.console.Len()
		} else {
			h.rec = *r
		}
		l.lines = append(l.lines, h)
		return
	}
	if l.opts.JSON {
		l.opts.Events.Write(line)
		return
	}
	l.line.Reset()
	formatConsole(&l.line, r, l.opts.Color, &l.stamp)
	l.opts.Events.Write(l.line.Bytes()) // one Write: never spliced into a server stderr line
}

// consoleSkip reports the fields left out of the readable line: the
// client's log already has the server's stderr, and the rest is in the
// ledger. A switch, not a map: it is asked for every field of every record.
func consoleSkip(key string) bool {
	switch key {
	case "env_names", "path", "stderr_tail", "tool_digests", "body":
		return true
	}
	return false
}

// formatConsole formats a record as one readable line, straight from the
// record (re-parsing its JSON cost half the shim's CPU):
//
//	mcpshim[fs] 15:04:05.000 handshake initialize_responded protocol_version=2025-11-25 latency_ms=3.2 run=…4KQ
func formatConsole(buf *bytes.Buffer, r *Record, color bool, st *stamp) {
	dim, bold, reset := "", "", ""
	if color {
		dim, bold, reset = "\x1b[2m", "\x1b[1m", "\x1b[0m"
	}
	// Appended, not Fprintf'd: this line is printed for every record, on
	// the recorder's goroutine that shares the cores with the relay.
	b := buf.AvailableBuffer()
	b = append(b, "mcpshim["...)
	b = append(b, termsafe.String(r.Server)...)
	b = append(b, "] "...)
	b = append(b, dim...)
	b = st.appendClock(b, r.Time)
	b = append(b, reset...)
	b = append(b, ' ')
	b = append(b, termsafe.String(string(r.Phase))...)
	b = append(b, ' ')
	b = append(b, bold...)
	b = append(b, termsafe.String(r.Event)...)
	b = append(b, reset...)
	if r.Origin != "" {
		b = append(b, " ("...)
		b = append(b, termsafe.String(r.Origin)...)
		b = append(b, ')')
	}
	for _, f := range r.Fields {
		if consoleSkip(f.Key) {
			continue
		}
		b = append(b, ' ')
		b = append(b, termsafe.String(f.Key)...)
		b = append(b, '=')
		b = appendValue(b, f.Value)
	}
	if len(r.Run) > 10 {
		b = append(b, ' ')
		b = append(b, dim...)
		b = append(b, "run=…"...)
		b = append(b, r.Run[len(r.Run)-6:]...) // enough to tell runs apart in a log
		b = append(b, reset...)
	}
	b = append(b, '\n')
	buf.Write(b)
}

// plain reports whether s is printed as it is: printable ASCII, none of
// the characters that make a value quoted. termsafe, the quoting and UTF-8
// validation would each pass over it to leave it unchanged.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '=' {
			return false
		}
	}
	return s != ""
}

func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		if plain(v) {
			return append(b, v...) // the common case, in one pass
		}
		if v == "" || strings.ContainsAny(v, " \t\"=") || !utf8.ValidString(v) {
			return strconv.AppendQuote(b, v)
		}
		return append(b, termsafe.String(v)...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64) // as fmt's %v
	case time.Duration:
		return strconv.AppendFloat(b, float64(v.Microseconds())/1000, 'f', -1, 64)
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, s)
		}
		return append(b, ']')
	case []Field:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, termsafe.String(f.Key)...)
			b = append(b, '=')
			b = appendValue(b, f.Value)
		}
		return append(b, '}')
	default:
		return fmt.Append(b, v)
	}
}
