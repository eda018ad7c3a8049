package report

import (
	"io"
	"runtime"
	"sync"
)

// orderedBlock is how many items Ordered gives a goroutine at a time.
const orderedBlock = 4096

// Ordered writes to w what write appends for each of items 0 to n-1, in
// that order, making the bytes on every CPU at once: a million runs' rows
// or JSON take half the time on two. write must be safe to call from
// several goroutines; dst is its own. The first error stops the writing.
func Ordered(w io.Writer, n int, write func(dst []byte, i int) ([]byte, error)) error {
	blocks := (n + orderedBlock - 1) / orderedBlock
	workers := min(runtime.GOMAXPROCS(0), blocks)
	type done struct {
		b   []byte
		err error
	}
	// One channel per block, in order; a block's bytes wait in it until the
	// writer comes to it (a worker never waits to hand a block over). At most
	// two blocks per worker are handed out ahead of the writer.
	out := make([]chan done, blocks)
	for i := range out {
		out[i] = make(chan done, 1)
	}
	next := make(chan int)
	ahead := make(chan struct{}, 2*workers)
	// The blocks' buffers, reused: a block of runs' JSON is megabytes, made
	// anew it was a tenth of the writing in growing and copying.
	buffers := make(chan []byte, 2*workers+1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() { // exits when next is closed
			defer wg.Done()
			for k := range next {
				var d done
				select {
				case d.b = <-buffers:
				default:
				}
				for i := k * orderedBlock; i < min(n, (k+1)*orderedBlock) && d.err == nil; i++ {
					d.b, d.err = write(d.b, i)
				}
				out[k] <- d
			}
		}()
	}
	go func() { // exits once every block is handed out, or the writer stopped
		defer close(next)
		for k := range blocks {
			select {
			case ahead <- struct{}{}:
			case <-stop:
				return
			}
			next <- k
		}
	}()
	var err error
	for k := range blocks {
		d := <-out[k]
		<-ahead
		if err == nil {
			err = d.err
		}
		if err == nil {
			_, err = w.Write(d.b)
		}
		if err != nil {
			break
		}
		select {
		case buffers <- d.b[:0]:
		default:
		}
	}
	close(stop)
	wg.Wait()
	return err
}
