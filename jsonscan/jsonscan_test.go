package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, ` {"a" : [ 1 , 2 ] } `,
	`"x"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, `"a\"b"`, "\"\x01\"", "\"\xff\"", `"`, `"\`, `"\u12`,
	`"0123456789abcdef"`, `"01234567\"9abcdef"`, "\"0123456789\x1fbcdef\"", `"01234567\u00e9abcdef"`, "\"0123456é9abcdef\"",
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e`, `1e+`, `-1.5e-3`, `1 2`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `[true,false,null]`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`[2026-07-23 16:48:43] INFO`, `{"a":[{"b":[]}]}`, `{"a":[}`, `[{]`, `{]`, `[}`, `{}}`, `[]]`, "{}\n", "\t[]\r\n",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
}

// TestValidAsEncodingJSON: Valid answers as encoding/json.Valid on the seeds.
func TestValidAsEncodingJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.80q) = %v, want %v (encoding/json)", s, got, want)
		}
	}
}

// FuzzValid holds Valid to encoding/json.Valid on any input, Value's end to
// where a decoder stops after the first value, and String's escaped to
// whether the decoded text differs from the bytes.
func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, want %v (encoding/json)", b, got, want)
		}
		start := SkipSpace(b, 0)
		end, ok := Value(b, start, 0)
		if !ok {
			return
		}
		if !json.Valid(b[start:end]) {
			t.Fatalf("Value(%q) ends at %d: %q is not one JSON value", b, end, b[start:end])
		}
		if b[start] != '"' {
			return
		}
		send, escaped, ok := String(b, start)
		var s string
		if !ok || send != end || json.Unmarshal(b[start:end], &s) != nil {
			t.Fatalf("String(%q) = %d, %v, want %d, true", b, send, ok, end)
		}
		if plain := string(b[start+1 : end-1]); !escaped && s != plain {
			t.Fatalf("String(%q): escaped false, but it decodes to %q, not %q", b, s, plain)
		}
	})
}

// TestValueDepth: a value inside depth containers may open MaxDepth-depth more.
func TestValueDepth(t *testing.T) {
	for _, tc := range []struct {
		depth, open int
		ok          bool
	}{{0, MaxDepth, true}, {0, MaxDepth + 1, false}, {1, MaxDepth - 1, true}, {1, MaxDepth, false}, {MaxDepth, 0, true}, {MaxDepth, 1, false}} {
		v := strings.Repeat("[", tc.open) + "1" + strings.Repeat("]", tc.open)
		if _, ok := Value([]byte(v), 0, tc.depth); ok != tc.ok {
			t.Errorf("Value(%d brackets, depth %d): got ok %v, want %v", tc.open, tc.depth, ok, tc.ok)
		}
	}
}

// TestSpecial holds the eight-byte test to a byte-by-byte one: its lowest
// mark is the first byte that needs a look.
func TestSpecial(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			for _, fill := range []byte{'a', '"', 0x01, 0xff} {
				b := bytes.Repeat([]byte{'a'}, 8)
				b[pos] = byte(c)
				for k := pos + 1; k < 8; k++ {
					b[k] = fill // what follows the first byte that needs a look does not matter
				}
				want := 8
				for k, x := range b {
					if x == '"' || x == '\\' || x < 0x20 || x >= 0x80 {
						want = k
						break
					}
				}
				got := 8
				if m := special(binary.LittleEndian.Uint64(b)); m != 0 {
					got = bits.TrailingZeros64(m) / 8
				}
				if got != want {
					t.Fatalf("special(%q): first byte to look at %d, want %d", b, got, want)
				}
			}
		}
	}
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hello, world"}],"isError":false}}`)
	b.Run("jsonscan", func(b *testing.B) {
		for b.Loop() {
			Valid(line)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
}
