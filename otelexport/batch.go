package otelexport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

// State is what a batch export remembers between invocations: how far each
// ledger file was exported, and the runs still open at that point (their
// requests await answers, their root spans their exit).
type State struct {
	Files []FileState     `json:"files"`
	Open  json.RawMessage `json:"open,omitempty"` // the Mapper's state
}

// FileState is one ledger file's progress. A file is known by its first
// line, which an append-only ledger never changes: a rotated file keeps its
// progress under its new name, and a new file under an old name starts over.
type FileState struct {
	Path   string `json:"path"`
	Head   string `json:"head"`   // sha256 of the first line
	Offset int64  `json:"offset"` // bytes exported: always the end of a line
}

// LoadState reads a state file; a missing one is an empty state. It is
// never read through a symlink, nor when it is another user's (safefile).
func LoadState(path string) (*State, error) {
	b, err := safefile.Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return &State{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("export state %s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("export state %s: %w", path, err)
	}
	return &st, nil
}

// Save writes the state atomically (a new file renamed over the old), 0600.
func (s *State) Save(path string) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("export state %s: %w", path, err)
	}
	if _, err := safefile.Dir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("export state %s: %w", path, err)
	}
	if err := safefile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("export state %s: %w", path, err)
	}
	return nil
}

func (s *State) file(head string) *FileState {
	for i := range s.Files {
		if s.Files[i].Head == head {
			return &s.Files[i]
		}
	}
	s.Files = append(s.Files, FileState{Head: head})
	return &s.Files[len(s.Files)-1]
}

// BatchOptions configures ExportFiles.
type BatchOptions struct {
	// State is the state file; "" exports everything and remembers nothing.
	State string
	// BatchSize is spans per export; default 512.
	BatchSize int
	// Base is the resource every span's starts from (BaseResource).
	Base []attribute.KeyValue
	// Full is Config.Full.
	Full bool
	// Alive says whether a run's server pid still runs; nil is never. A
	// run with no end record whose server is gone had its shim killed
	// (SIGKILL, a power cut): it is ended at its last record with the
	// verdict mcpshim ledger gives it, UNRECORDED, not left open.
	Alive func(pid int) bool
}

// BatchResult counts what an export did.
type BatchResult struct {
	Files   int // files with new records
	Records int // records read
	Spans   int // spans exported
	Skipped int // lines that were not records (torn, garbage)
	Open    int // runs still open: their root spans wait for their exit
	Ended   int // runs with no end record whose server is gone, ended UNRECORDED
}

// ExportFiles exports the records of files (in order: rotated files first,
// as ledger.Files lists them) that earlier exports with the same state did
// not. Only whole lines are read, so a ledger being written is safe to
// export. Progress is saved after each file whose spans were all taken; a
// failed export is retried from the start of that file by the next run, and
// since span ids derive from the records, a backend sees the same spans again,
// not new ones.
func ExportFiles(ctx context.Context, exp *Exporter, files []string, opts BatchOptions) (BatchResult, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 512
	}
	var res BatchResult
	st := &State{}
	if opts.State != "" {
		var err error
		if st, err = LoadState(opts.State); err != nil {
			return res, err
		}
	}
	m := NewMapper(opts.Base)
	m.full = opts.Full
	if len(st.Open) > 0 {
		if err := m.UnmarshalJSON(st.Open); err != nil {
			return res, fmt.Errorf("export state %s: %w", opts.State, err)
		}
	}
	for _, path := range files {
		n, err := exportFile(ctx, exp, m, st, path, opts.BatchSize, &res)
		if err != nil {
			return res, err
		}
		if n == 0 {
			continue
		}
		res.Files++
		if st.Open, err = m.MarshalJSON(); err != nil {
			return res, err
		}
		if opts.State != "" {
			if err := st.Save(opts.State); err != nil {
				return res, err
			}
		}
	}
	// What there is has been read: the roots held for what follows an exit
	// go now, and so do the runs whose shim was killed.
	spans := m.Flush()
	if opts.Alive != nil {
		open := m.OpenRuns()
		spans = append(spans, m.FinishGone(opts.Alive)...)
		res.Ended = open - m.OpenRuns()
	}
	if len(spans) > 0 {
		if err := exp.ExportSpans(ctx, spans); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
		res.Spans += len(spans)
		var err error
		if st.Open, err = m.MarshalJSON(); err != nil {
			return res, err
		}
	}
	res.Open = m.OpenRuns()
	if opts.State != "" {
		st.prune()
		if err := st.Save(opts.State); err != nil {
			return res, err
		}
	}
	return res, nil
}

// exportFile exports the whole lines of path past its saved offset and
// advances the offset. It returns how many bytes it consumed.
func exportFile(ctx context.Context, exp *Exporter, m *Mapper, st *State, path string, batchSize int, res *BatchResult) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	head, err := firstLine(f)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if head == "" {
		return 0, nil // not one whole line yet
	}
	fs := st.file(head)
	fs.Path = path
	if fs.Offset > fi.Size() {
		fs.Offset = 0
	}
	end, err := lastLineEnd(f, fs.Offset, fi.Size())
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if end <= fs.Offset {
		return 0, nil
	}
	sc := ledger.NewScanner(io.NewSectionReader(f, fs.Offset, end-fs.Offset))
	var batch []*Span
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := exp.ExportSpans(ctx, batch); err != nil {
			return fmt.Errorf("export %s: %w", path, err)
		}
		res.Spans += len(batch)
		batch = nil
		return nil
	}
	for sc.Scan() {
		e, err := sc.Decode()
		if err != nil {
			res.Skipped++
			continue
		}
		res.Records++
		batch = append(batch, m.Add(&e)...)
		if len(batch) >= batchSize {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	res.Skipped += sc.Skipped()
	if sc.Err() != nil {
		return 0, fmt.Errorf("read %s: %w", path, sc.Err())
	}
	if err := flush(); err != nil {
		return 0, err
	}
	n := end - fs.Offset
	fs.Offset = end
	return n, nil
}

// prune forgets files that are gone (pruned ledgers).
func (s *State) prune() {
	kept := s.Files[:0]
	for _, f := range s.Files {
		if _, err := os.Stat(f.Path); err == nil {
			kept = append(kept, f)
		}
	}
	s.Files = kept
}

// firstLine hashes the file's first line; "" when it has no whole line.
func firstLine(f *os.File) (string, error) {
	h := sha256.New()
	r := bufio.NewReader(io.NewSectionReader(f, 0, 1<<62))
	for {
		chunk, err := r.ReadSlice('\n')
		h.Write(chunk)
		switch {
		case err == nil:
			return hex.EncodeToString(h.Sum(nil)), nil
		case err == io.EOF:
			return "", nil
		case err != bufio.ErrBufferFull:
			return "", err
		}
	}
}

// lastLineEnd is the offset just past the last newline in [from, size), or
// from when there is none: a line still being written is left for later.
func lastLineEnd(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > from; {
		start := max(from, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return from, nil
}
