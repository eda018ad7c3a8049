package truth

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// TestOfOracle: the rules give what a person wrote for each named scenario
// of the hand-written oracle (the interop test plays them through the shim).
func TestOfOracle(t *testing.T) {
	b, err := os.ReadFile("../../interop/testdata/truth/oracle.txtar")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, block := range strings.Split(string(b), "\n-- ")[1:] {
		head, body, _ := strings.Cut(block, "\n")
		var spec, want string
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, "spec: "); ok {
				spec = v
			}
			if v, ok := strings.CutPrefix(line, "want: "); ok {
				want = v
			}
		}
		sp, err := testfixtures.ParseFaultSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if got := Of(sp).String(); got != want {
			t.Errorf("%s: Of(%s)\ngot  %s\nwant %s", strings.TrimSuffix(head, " --"), sp, got, want)
		}
	}
	if n < 40 {
		t.Errorf("the oracle has %d scenarios, want at least 40", n)
	}
}
