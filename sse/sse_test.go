package sse

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestSSEReader(t *testing.T) {
	stream := "id: prime\ndata: \n\n" + // the TypeScript SDK's priming event: an id, no message
		": a comment\nretry: 1500\n\n" +
		"event: message\nid: 7\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"data: {\"b\":2}\r\rdata: {\"c\":3}\n\n" +
		"retry: x\nretry: +5\n" +
		"data: {\"cut\":"
	r := NewReader(strings.NewReader(stream), 1<<20)
	for _, want := range []string{"{\"a\":\n1}", "{\"b\":2}", "{\"c\":3}"} {
		ev, err := r.Next()
		if err != nil || string(ev.Data) != want {
			t.Fatalf("next = %q, %v; want %q", ev.Data, err, want)
		}
	}
	if r.LastID != "7" {
		t.Errorf("lastID = %q, want 7 (the last event that had one)", r.LastID)
	}
	if _, err := r.Next(); err != io.ErrUnexpectedEOF {
		t.Errorf("a stream cut inside an event: %v, want io.ErrUnexpectedEOF", err)
	}
	if r.Retry != 1500*time.Millisecond {
		t.Errorf("retry = %v, want 1.5s (the fields that are not all digits ignored)", r.Retry)
	}
}

func TestSSEReaderCap(t *testing.T) {
	for name, stream := range map[string]string{
		"one line":    "data: " + strings.Repeat("x", 2000) + "\n\n",
		"many lines":  strings.Repeat("data: xxxxxxxxx\n", 200) + "\n",
		"no line end": "data: " + strings.Repeat("x", 2000),
	} {
		r := NewReader(strings.NewReader(stream), 1000)
		if _, err := r.Next(); err != ErrTooLarge {
			t.Errorf("%s: next = %v, want ErrTooLarge", name, err)
		}
	}
}
