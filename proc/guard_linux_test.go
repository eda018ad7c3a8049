package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGuardRunsAtLowestPriority: the guard only waits, and its start must
// not take the CPU from the server's: it runs at nice 19.
func TestGuardRunsAtLowestPriority(t *testing.T) {
	p, err := Start(Spec{Path: "sleep", Args: []string{"30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	out := filepath.Join(t.TempDir(), "nice")
	// A stand-in guard: once released, it writes its nice value (field 19 of its stat).
	w, err := StartGuard([]string{"sh", "-c", `cat >/dev/null; cut -d' ' -f19 /proc/$$/stat > ` + out + `.tmp; mv ` + out + `.tmp ` + out, "guard"}, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil {
			if got := strings.TrimSpace(string(b)); got != "19" {
				t.Fatalf("the guard runs at nice %s, want 19", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in guard never wrote its nice value")
		}
	}
}
