package main

import (
	"slices"
	"time"
)

// summary is the spread of one pipeline's round trips.
type summary struct {
	Min, Median, P90, P99, Max time.Duration
}

// stats sorts ds in place and reads nearest-rank percentiles from it.
func stats(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	slices.Sort(ds)
	return summary{
		Min:    ds[0],
		Median: percentile(ds, 50),
		P90:    percentile(ds, 90),
		P99:    percentile(ds, 99),
		Max:    ds[len(ds)-1],
	}
}

// percentile is the nearest-rank p-th percentile of sorted, non-empty ds:
// the smallest value with at least p% of the values at or below it.
func percentile(ds []time.Duration, p int) time.Duration {
	rank := (p*len(ds) + 99) / 100 // ceil(p/100 * n)
	return ds[max(rank, 1)-1]
}

// medianFloat is the median of xs (the mean of the middle two when even); xs is sorted in place.
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
