package cmdline

import (
	"fmt"
	"testing"
)

// TestFlagsOfUsage: the flags a usage lists, and which take a value.
func TestFlagsOfUsage(t *testing.T) {
	usage := "usage: mcpshim probe [flags]\n\nflags:\n  --config FILE   a config (repeatable)\n  --json          print JSON\n  -v              verbose\n  --timeout duration\n"
	got := fmt.Sprint(FlagsOfUsage(usage))
	if want := "map[config:true json:false timeout:true v:false]"; got != want {
		t.Errorf("FlagsOfUsage = %s, want %s", got, want)
	}
	flags := map[string]bool{"config": true, "json": false}
	if n := Positionals([]string{"--config", "a.json", "--json", "x", "--config=b", "y"}, flags); n != 2 {
		t.Errorf("Positionals = %d, want 2 (x and y)", n)
	}
	if _, ok := Script("tcsh"); ok {
		t.Errorf("Script(tcsh): a script, want none")
	}
}
