// Package progress owns the relay benchmark's flood unit, which the driver
// and the echo server both write: one notifications/progress line of an
// exact size. It knows nothing of the shim.
package progress

// Line is one notifications/progress line of exactly size bytes, newline
// included (at least 80).
func Line(size int) []byte {
	head := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"flood","progress":1,"message":"`
	tail := "\"}}\n"
	b := make([]byte, 0, size)
	b = append(b, head...)
	for len(b) < size-len(tail) {
		b = append(b, 'x')
	}
	return append(b, tail...)
}
