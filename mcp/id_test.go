package mcp

import "testing"

func TestIDValues(t *testing.T) {
	same := [][]string{
		{`1`, `1.0`, `1e0`, `10e-1`, `0.1e1`, `1.000`},
		{`100.0`, `1e2`, `1E+2`, `100`},
		{`0`, `-0`, `0.0`, `0e9`},
		{`-5`, `-5.0`, `-0.5e1`},
		{`1.5`, `15e-1`, `0.15e1`},
		{`123456789012345678901`, `1.23456789012345678901e20`},
		{`"é"`, `"\u00e9"`, `"\u00E9"`},
		{`"a/b"`, `"a\/b"`},
		{`"😀"`, `"\ud83d\ude00"`},
		{`null`},
	}
	for i, group := range same {
		first, ok := ParseID([]byte(group[0]))
		if !ok {
			t.Fatalf("ParseID(%s) failed", group[0])
		}
		for _, raw := range group[1:] {
			id, ok := ParseID([]byte(raw))
			if !ok || id != first {
				t.Errorf("ParseID(%s) = %v (ok %v), want %v as for %s", raw, id, ok, first, group[0])
			}
		}
		for j, other := range same {
			if j == i {
				continue
			}
			if id, _ := ParseID([]byte(other[0])); id == first {
				t.Errorf("ParseID(%s) == ParseID(%s), want different ids", other[0], group[0])
			}
		}
	}
	different := [][2]string{{`1`, `"1"`}, {`"a"`, `"A"`}, {`1`, `10`}, {`"\u00e9"`, `"e\u0301"`}, {`"\u00ff"`, "\"\xff\""}}
	for _, d := range different {
		a, _ := ParseID([]byte(d[0]))
		b, _ := ParseID([]byte(d[1]))
		if a == b {
			t.Errorf("ParseID(%s) == ParseID(%s), want different ids", d[0], d[1])
		}
	}
	for _, bad := range []string{``, `{}`, `[1]`, `true`, `1.`, `.5`, `1e`, `"a`, `"\x"`, `01x`} {
		if id, ok := ParseID([]byte(bad)); ok {
			t.Errorf("ParseID(%q) = %v, want failure", bad, id)
		}
	}
}

func TestIDMapKey(t *testing.T) {
	m := map[ID]int{}
	a, _ := ParseID([]byte(`"a\/b"`))
	b, _ := ParseID([]byte(`"a/b"`))
	m[a] = 1
	if m[b] != 1 {
		t.Fatalf("map lookup by %v after storing %v: got %d, want 1", b, a, m[b])
	}
}
