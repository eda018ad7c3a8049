package report

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
)

// Store keeps runs packed (pack.go): the views that show every run of a large
// ledger (the table, --json) hold a million runs in about 200 MB instead of
// 5 GB. Add may be called from several goroutines at once; the rest is for
// one goroutine, after the last Add.
type Store struct {
	mu     sync.Mutex
	chunks [][]byte // packed runs, each after its length; never moved once written
	index  []stored
}

// stored is where one packed run is, and its start for the order.
type stored struct {
	start      int64 // unix ns
	chunk, off uint32
}

const chunkSize = 1 << 20

var packBuffers = sync.Pool{New: func() any { return new([]byte) }}

// Add keeps r.
func (s *Store) Add(r *Run) {
	bp := packBuffers.Get().(*[]byte)
	b := r.pack((*bp)[:0])
	s.mu.Lock()
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(b)+binary.MaxVarintLen64 > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]byte, 0, max(chunkSize, len(b)+binary.MaxVarintLen64)))
		last++
	}
	c := s.chunks[last]
	s.index = append(s.index, stored{start: r.Start.UnixNano(), chunk: uint32(last), off: uint32(len(c))})
	c = binary.AppendUvarint(c, uint64(len(b)))
	s.chunks[last] = append(c, b...)
	s.mu.Unlock()
	*bp = b
	packBuffers.Put(bp)
}

// Len is how many runs are kept.
func (s *Store) Len() int { return len(s.index) }

// packed is the i-th run's packed bytes.
func (s *Store) packed(i int) []byte {
	at := s.index[i]
	b := s.chunks[at.chunk][at.off:]
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

// Sort orders the runs oldest first (by start, then id), as Summary.Runs.
func (s *Store) Sort() {
	slices.SortFunc(s.index, func(a, b stored) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return bytes.Compare(s.packedAt(a), s.packedAt(b))
	})
}

func (s *Store) packedAt(at stored) []byte {
	b := s.chunks[at.chunk][at.off:]
	n, k := binary.Uvarint(b)
	return packedID(b[k : k+int(n)])
}

// Run unpacks the i-th run into r.
func (s *Store) Run(i int, r *Run) {
	*r = Run{}
	r.unpack(s.packed(i))
}

// ID is the i-th run's id, without unpacking it.
func (s *Store) ID(i int) string { return string(packedID(s.packed(i))) }

// Index is the place of the run with the id, or -1.
func (s *Store) Index(id string) int {
	for i := range s.index {
		if string(packedID(s.packed(i))) == id {
			return i
		}
	}
	return -1
}
