package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2), 50, 1 * time.Millisecond},
		{ms(1, 2, 3), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 90, 90 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(hundred...), 100, 100 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %d): got %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestSummarizeSorts(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	got := stats(ds)
	want := summary{Min: 1, Median: 3, P90: 5, P99: 5, Max: 5}
	if got != want {
		t.Errorf("stats(5 1 4 2 3): got %+v, want %+v", got, want)
	}
}

func TestMedianFloat(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{4, 1}, 2.5},
		{[]float64{9, 1, 5}, 5},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.xs...)
		if got := medianFloat(in); got != tt.want {
			t.Errorf("medianFloat(%v): got %v, want %v", tt.xs, got, tt.want)
		}
	}
}
