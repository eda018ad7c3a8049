package cmdline

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestSuggest(t *testing.T) {
	words := []string{"ledger", "probe", "lock", "wrap", "unwrap", "demo", "show"}
	tests := []struct{ word, want string }{
		{"ledgr", "ledger"}, {"shwo", "show"}, {"lokc", "lock"}, {"prbe", "probe"}, {"wrpa", "wrap"},
		{"zzz", ""}, {"x", ""}, {"deploy", ""}, {"ledger", "ledger"},
	}
	for _, tt := range tests {
		if got := Suggest(tt.word, words); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestParse: every mistake is one line naming the flag, with the nearest
// flag when there is one and where help is; flags and positionals mix.
func TestParse(t *testing.T) {
	newSet := func() *flag.FlagSet {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.String("name", "", "")
		fs.Duration("kill-grace", time.Second, "")
		fs.Int("max-restarts", 5, "")
		fs.Bool("quiet", false, "")
		fs.Func("parallel", "", func(string) error { return errorString("want auto or 0 to 128") })
		return fs
	}
	tests := []struct {
		args []string
		want string // the whole error; "" for none
	}{
		{[]string{"--nmae", "x"}, "unknown flag --nmae; did you mean --name? (x --help lists the flags)"},
		{[]string{"--zzzzzz"}, "unknown flag --zzzzzz (x --help lists the flags)"},
		{[]string{"--kill-grace", "abc"}, "--kill-grace abc: want a duration such as 2s, 500ms or 1m30s (x --help lists the flags)"},
		{[]string{"--max-restarts", "x"}, "--max-restarts x: want a whole number (x --help lists the flags)"},
		{[]string{"--max-restarts", "99999999999999999999"}, "--max-restarts 99999999999999999999: out of range: want a whole number that fits (x --help lists the flags)"},
		{[]string{"--quiet=maybe"}, "--quiet maybe: want true or false (or the flag alone) (x --help lists the flags)"},
		{[]string{"--parallel", "many"}, "--parallel many: want auto or 0 to 128 (x --help lists the flags)"},
		{[]string{"--name"}, "--name needs a value (x --help lists the flags)"},
		{[]string{"a", "--name", "n", "b", "--", "--quiet"}, ""},
	}
	for _, tt := range tests {
		pos, err := Parse(newSet(), tt.args, "x --help")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want || strings.Contains(got, "\n") {
			t.Errorf("Parse(%q) = %q, want %q", tt.args, got, tt.want)
		}
		if tt.want == "" && strings.Join(pos, " ") != "a b --quiet" {
			t.Errorf("Parse(%q) positionals = %q, want a b --quiet", tt.args, pos)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestFold(t *testing.T) {
	long := strings.Repeat("word ", 40) + "https://example.com/" + strings.Repeat("x", 90)
	for _, line := range strings.Split(strings.TrimSuffix(Fold(long, Width, "  "), "\n"), "\n") {
		if len([]rune(line)) > Width && strings.Contains(line, " word") {
			t.Errorf("Fold: a line of %d columns: %q", len(line), line)
		}
		if !strings.HasPrefix(line, "  ") {
			t.Errorf("Fold: a line without the indent: %q", line)
		}
	}
}
