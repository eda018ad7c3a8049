package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tabs aside", "plain text, tabs aside"},
		{"héllo → ünïcode", "héllo → ünïcode"},
		{"osc52 \x1b]52;c;aGVsbG8=\x07", `osc52 \x1b]52;c;aGVsbG8=\a`},
		{"erase \x1b[2K\x1b[1Aup", `erase \x1b[2K\x1b[1Aup`},
		{"title \x1b]0;pwned\x1b\\", `title \x1b]0;pwned\x1b\`},
		{"dcs \x1bP+q544e\x1b\\", `dcs \x1bP+q544e\x1b\`},
		{"cr\roverwrite\nnext\ttab\x00nul\x7fdel", `cr\roverwrite\nnext\ttab\x00nul\x7fdel`},
		{"c1 \u009b2J \u009d0;t\u009c", `c1 \u009b2J \u009d0;t\u009c`},
		{"raw 8-bit csi \x9b2J", `raw 8-bit csi \x9b2J`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestEveryControl feeds every C0 and C1 control and DEL: none comes out.
func TestEveryControl(t *testing.T) {
	for r := rune(0); r < 0xa0; r++ {
		if r >= 0x20 && r < 0x7f {
			continue
		}
		in := "a" + string(r) + "b"
		if r >= 0x80 {
			in = "a" + string([]byte{byte(r)}) + string(r) + "b" // raw byte and rune
		}
		got := String(in)
		if i := strings.IndexFunc(got, func(c rune) bool { return c < 0x20 || c >= 0x7f && c < 0xa0 || c == 0xfffd }); i >= 0 {
			t.Errorf("String(%q) = %q: emits a control", in, got)
		}
		var b bytes.Buffer
		Writer{&b}.Write([]byte(in + "\n"))
		if out := b.String(); out != got+"\n" && r != '\n' && r != '\t' {
			t.Errorf("Writer(%q) wrote %q, want %q", in, out, got+"\n")
		}
	}
}

func TestStringUnchangedAllocatesNothing(t *testing.T) {
	s := "tools_list_responded tool_count=3"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String of clean text allocated %v times, want 0", n)
	}
}
