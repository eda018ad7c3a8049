package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/cause"
)

// The tail keeps the cause the chooser finds in the whole output, line by
// line, whatever it dropped (the crash outputs are the cause package's).
func TestTailCauseRealCrashes(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "cause", "testdata", "*", "*.txt"))
	if len(files) < 10 {
		t.Fatalf("got %d crash outputs in ../cause/testdata, want the real ones", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		var tail Tail
		for _, l := range lines {
			tail.add([]byte(l))
		}
		wantLine, wantStated := cause.Choose(lines)
		if got, stated := tail.Cause(); got != wantLine || stated != wantStated {
			t.Errorf("Tail.Cause after %s = %q, %v; want %q, %v (cause.Choose)", f, got, stated, wantLine, wantStated)
		}
	}
}

func TestExitCause(t *testing.T) {
	tests := []struct {
		line              string
		stated, requested bool
		want              string
	}{
		{"fatal: missing API key", true, false, "exited with code 1: fatal: missing API key"},
		{"listening on stdio", false, false, "exited with code 1: listening on stdio"},
		{"listening on stdio", false, true, "exited with code 1"}, // a banner does not explain a kill
		{"", false, false, "exited with code 1"},
		{strings.Repeat("é", 150), true, false, "exited with code 1: " + strings.Repeat("é", 100) + "…"},
	}
	for _, tt := range tests {
		if got := ExitCause("exited with code 1", tt.line, tt.stated, tt.requested); got != tt.want {
			t.Errorf("ExitCause(%q, stated=%v, requested=%v) = %q, want %q", tt.line, tt.stated, tt.requested, got, tt.want)
		}
	}
}
