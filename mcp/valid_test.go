package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, ` {"a" : [ 1 , 2 ] } `,
	`"x"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, `"a\"b"`, "\"\x01\"", "\"\xff\"", `"`, `"\`, `"\u12`,
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

// FuzzValid holds Valid to encoding/json.Valid on any input.
func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, want %v (encoding/json)", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hello, world"}],"isError":false}}`)
	b.Run("mcp", func(b *testing.B) {
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
