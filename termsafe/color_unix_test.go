//go:build !windows

package termsafe

import (
	"bytes"
	"os"
	"testing"

	"github.com/creack/pty"
)

// TestColorOn: colour on a terminal only, and never with a non-empty
// NO_COLOR or TERM=dumb; an empty NO_COLOR is no request.
func TestColorOn(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	null, err := os.Open(os.DevNull) // a character device that is not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	tests := []struct {
		name string
		env  map[string]string
		w    any
		want bool
	}{
		{"terminal", nil, tty, true},
		{"NO_COLOR=1", map[string]string{"NO_COLOR": "1"}, tty, false},
		{"NO_COLOR empty", map[string]string{"NO_COLOR": ""}, tty, true},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, tty, false},
		{"/dev/null", nil, null, false},
		{"a buffer", nil, &bytes.Buffer{}, false},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		var got bool
		switch w := tt.w.(type) {
		case *os.File:
			got = ColorOn(getenv, w)
		case *bytes.Buffer:
			got = ColorOn(getenv, w)
		}
		if got != tt.want {
			t.Errorf("%s: ColorOn = %v, want %v", tt.name, got, tt.want)
		}
	}
}
