package jsonrpc

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// hugeLine is one 64 MiB JSON-RPC response line.
var hugeLine = []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` +
	strings.Repeat("x", 64<<20-80) + `"}]}}` + "\n")

// pump writes data into a real pipe, as a child's stdout would.
func pump(b *testing.B, data []byte) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	// The writer: returns when data is written or the reader closed the pipe.
	go func() {
		w.Write(data)
		w.Close()
	}()
	return r
}

// BenchmarkCopyHugeLine is the bare relay: io.Copy from a pipe.
func BenchmarkCopyHugeLine(b *testing.B) {
	b.SetBytes(int64(len(hugeLine)))
	for b.Loop() {
		r := pump(b, hugeLine)
		io.Copy(io.Discard, r)
		r.Close()
	}
}

// BenchmarkRelayHugeLine is the shim's relay with the default observation.
func BenchmarkRelayHugeLine(b *testing.B) {
	b.SetBytes(int64(len(hugeLine)))
	for b.Loop() {
		r := pump(b, hugeLine)
		var kept *Line
		rl := &Relay{Src: r, Dst: NewWire(io.Discard), Route: func(*Line) bool { return true }, Observe: func(l *Line) { kept = l }}
		if err := rl.Run(); err != nil {
			b.Fatal(err)
		}
		r.Close()
		_ = kept
	}
}

// BenchmarkRelaySmallLines relays 10,000 small messages.
func BenchmarkRelaySmallLines(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
	data := bytes.Repeat(msg, 10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := pump(b, data)
		rl := &Relay{Src: r, Dst: NewWire(io.Discard), Route: func(*Line) bool { return true }, Observe: func(*Line) {}}
		if err := rl.Run(); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkRelayHugeLineSkimmed is the shim's relay for a long line the tap
// does not need whole (Keep says no, as for a client's tools/call or most
// tool results): -benchmem shows what one 64 MiB line costs in memory.
func BenchmarkRelayHugeLineSkimmed(b *testing.B) {
	b.SetBytes(int64(len(hugeLine)))
	for b.Loop() {
		r := pump(b, hugeLine)
		rl := &Relay{Src: r, Dst: NewWire(io.Discard), Keep: func([]byte) bool { return false }, Route: func(*Line) bool { return true }, Observe: func(*Line) {}}
		if err := rl.Run(); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
