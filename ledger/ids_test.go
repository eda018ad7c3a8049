package ledger

import (
	"testing"
	"time"
)

// TestParseID: every id NewID makes parses back to its digits, and only such
// ids parse.
func TestParseID(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 31, 38, 0, time.UTC)
	for i := range 2000 {
		id := NewID("run", now.Add(time.Duration(i)*time.Hour*97))
		prefix, u, ok := ParseID(id)
		if !ok || prefix != "run" || "run_"+string(u.Append(nil)) != id {
			t.Fatalf("ParseID(%q) = %q, %v, %v; want run and the same digits back", id, prefix, u, ok)
		}
	}
	max := "run_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
	if _, u, ok := ParseID(max); !ok || u != (ULID{^uint64(0), ^uint64(0)}) {
		t.Errorf("ParseID(%q) = %v, %v; want all ones", max, u, ok)
	}
	for _, id := range []string{"", "run_A", "run_", "run_8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "run_01m8fs14gg224xmy2efsgz1pxb",
		"run_01M8FS14GG224XMY2EFSGZ1PXI", "run-01M8FS14GG224XMY2EFSGZ1PXB", "run_01M8FS14GG224XMY2EFSGZ1PX"} {
		if _, _, ok := ParseID(id); ok {
			t.Errorf("ParseID(%q) ok, want not an id of NewID's", id)
		}
	}
}
