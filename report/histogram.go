package report

import "math"

// histogram counts latencies in logarithmic buckets, 16 per doubling from
// 1µs: a fixed 2.5 KiB however many calls, and a bucket's midpoint is within
// 2.2% of any value in it.
type histogram struct {
	counts   []uint32
	total    uint64
	min, max float64
}

const (
	histMinMS   = 0.001
	histPerOct  = 16
	histBuckets = 40 * histPerOct // up to 2^40 µs, about 12 days
)

func (h *histogram) add(ms float64) {
	if math.IsNaN(ms) || ms < 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
		h.min, h.max = ms, ms
	}
	h.min, h.max = min(h.min, ms), max(h.max, ms)
	h.counts[bucketOf(ms)]++
	h.total++
}

func bucketOf(ms float64) int {
	if ms <= histMinMS {
		return 0
	}
	b := int(math.Log2(ms/histMinMS)*histPerOct) + 1
	return min(max(b, 0), histBuckets-1)
}

// quantile returns the value at rank ceil(q·n): a bucket's geometric
// midpoint, clamped to the exact minimum and maximum seen.
func (h *histogram) quantile(q float64) float64 {
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			if i == histBuckets-1 {
				return h.max // the overflow bucket
			}
			v := histMinMS
			if i > 0 {
				v = histMinMS * math.Exp2((float64(i)-0.5)/histPerOct)
			}
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
