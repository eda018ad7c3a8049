package ledger

import (
	"path/filepath"
	"testing"
)

// TestDefaultDirWindows: the ledgers live in the local profile, unless
// XDG_STATE_HOME says otherwise.
func TestDefaultDirWindows(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LOCALAPPDATA": `C:\Users\dev\AppData\Local`}, `C:\Users\dev\AppData\Local\mcpshim`},
		{map[string]string{"LOCALAPPDATA": `C:\Users\dev\AppData\Local`, "XDG_STATE_HOME": `D:\state`}, `D:\state\mcpshim`},
		{map[string]string{"HOME": `C:\Users\dev`}, `C:\Users\dev\AppData\Local\mcpshim`},
		{map[string]string{"HOME": `C:\msys\home\dev`, "USERPROFILE": `C:\Users\dev`}, `C:\Users\dev\AppData\Local\mcpshim`},
	}
	for _, tt := range tests {
		if got := DefaultDir(func(k string) string { return tt.env[k] }); got != filepath.Clean(tt.want) {
			t.Errorf("DefaultDir(%v) = %s, want %s", tt.env, got, tt.want)
		}
	}
}
