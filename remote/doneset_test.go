package remote

import (
	"fmt"
	"testing"
)

// TestDoneSetReusedID: an id answered, used again by the client and
// answered again is still known after its first slot in the ring is
// overwritten: the eviction of the older entry must not delete the newer
// one, or a late duplicate of it is taken for an unknown answer (issue 34
// item 20).
func TestDoneSetReusedID(t *testing.T) {
	d := newDoneSet()
	reused := keyOf([]byte(`7`))
	d.add(reused, false)
	d.forget(reused) // the client sends a new request with id 7
	for i := range 10 {
		d.add(keyOf(fmt.Appendf(nil, "%d", 1000+i)), false)
	}
	d.add(reused, true) // answered again, by the shim
	for i := range doneCap - 11 {
		d.add(keyOf(fmt.Appendf(nil, "%d", 2000+i)), false)
	}
	// The next add overwrites the first slot, the older entry of 7.
	d.add(keyOf([]byte(`99999`)), false)
	if owed, ok := d.has(reused); !ok || !owed {
		t.Errorf("has(7) = %v, %v after its older slot was reused; want true, true (the newer entry)", owed, ok)
	}
	// Its own slot's turn drops it.
	for i := range 11 {
		d.add(keyOf(fmt.Appendf(nil, "%d", 3000+i)), false)
	}
	if _, ok := d.has(reused); ok {
		t.Errorf("has(7) after doneCap newer answers = true, want false")
	}
}
