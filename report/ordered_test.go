package report

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// TestOrdered: the items come out in order, whatever the count, and an
// error stops the writing there.
func TestOrdered(t *testing.T) {
	for _, n := range []int{0, 1, orderedBlock - 1, orderedBlock, 3*orderedBlock + 7} {
		var got, want bytes.Buffer
		for i := range n {
			fmt.Fprintf(&want, "%d\n", i)
		}
		err := Ordered(&got, n, func(dst []byte, i int) ([]byte, error) {
			return append(strconv.AppendInt(dst, int64(i), 10), '\n'), nil
		})
		if err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("Ordered(%d): got %d bytes, %v, want %d bytes in order", n, got.Len(), err, want.Len())
		}
	}
	boom := errors.New("boom")
	var got bytes.Buffer
	err := Ordered(&got, 10*orderedBlock, func(dst []byte, i int) ([]byte, error) {
		if i == 2*orderedBlock+5 {
			return dst, boom
		}
		return append(dst, 'x'), nil
	})
	if !errors.Is(err, boom) || got.Len() != 2*orderedBlock {
		t.Errorf("Ordered with an error in block 2: got %v after %d bytes, want boom after %d", err, got.Len(), 2*orderedBlock)
	}
}
