package clientconfig

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// diffOp is one line of a line diff: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	line string // with its "\n", if it has one
}

// Diff renders the changes from a to b as a unified diff of the file name,
// with three lines of context: what a rewrite is about to do, in a form
// patch(1) applies.
func Diff(name string, a, b []byte) string {
	const context = 3
	ops := diffLines(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	aLine, bLine := 0, 0 // lines of a and b before ops[i]
	for i, last := 0, 0; i < len(ops); {
		if ops[i].kind == ' ' {
			aLine, bLine, i = aLine+1, bLine+1, i+1
			continue
		}
		start := max(i-context, last)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			next := end
			for next < len(ops) && ops[next].kind == ' ' {
				next++
			}
			if next < len(ops) && next-end <= 2*context {
				end = next
				continue
			}
			end = min(end+context, len(ops))
			break
		}
		aStart, bStart := aLine-(i-start), bLine-(i-start)
		aCount, bCount := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aCount++
			}
			if op.kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		for _, op := range ops[i:end] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		i, last = end, end
	}
	return out.String()
}

// hunkRange is a hunk's start,count for lines after the first start lines.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func splitLines(b []byte) []string {
	var lines []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		lines = append(lines, string(b[:i]))
		b = b[i:]
	}
	return lines
}

// diffLines is a shortest edit script from a to b (Myers). The common ends
// are set aside first: a rewrite changes a few lines of a long file.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	off := n + m + 1
	v := make([]int, 2*off+1) // v[off+k]: furthest x on diagonal k = x-y
	var trace [][]int         // trace[d]: v[k] for k in [-d-1, d+1] before step d
	d := 0
search:
	for ; ; d++ {
		trace = append(trace, slices.Clone(v[off-d-1:off+d+2]))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: a line of b added
			} else {
				x = v[off+k-1] + 1 // right: a line of a removed
			}
			for y := x - k; x < n && y < m && a[x] == b[y]; y++ {
				x++
			}
			v[off+k] = x
			if x >= n && x-k >= m {
				break search
			}
		}
	}
	var rev []diffOp
	x, y := n, m
	for ; d > 0; d-- {
		w, k := trace[d], x-y
		at := func(k int) int { return w[k+d+1] }
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, diffOp{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if prevK == k+1 {
			rev = append(rev, diffOp{'+', b[y-1]})
		} else {
			rev = append(rev, diffOp{'-', a[x-1]})
		}
		x, y = prevX, prevY
	}
	for ; x > 0; x, y = x-1, y-1 {
		rev = append(rev, diffOp{' ', a[x-1]})
	}
	slices.Reverse(rev)
	return rev
}
