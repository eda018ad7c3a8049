package remote

import (
	"io"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	stream := "id: prime\ndata: \n\n" + // the TypeScript SDK's priming event: an id, no message
		": a comment\nretry: 1000\n\n" +
		"event: message\nid: 7\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"data: {\"b\":2}\n\n" +
		"data: {\"cut\":"
	r := newSSEReader(strings.NewReader(stream))
	for _, want := range []string{"{\"a\":\n1}", "{\"b\":2}"} {
		ev, err := r.next()
		if err != nil || string(ev.data) != want {
			t.Fatalf("next = %q, %v; want %q", ev.data, err, want)
		}
	}
	if r.lastID != "7" {
		t.Errorf("lastID = %q, want 7 (the last event that had one)", r.lastID)
	}
	if _, err := r.next(); err != io.ErrUnexpectedEOF {
		t.Errorf("a stream cut inside an event: %v, want io.ErrUnexpectedEOF", err)
	}
}
