package ledger

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDefaultDirNeverRelative: with HOME (and on Windows LOCALAPPDATA and
// USERPROFILE) unset or relative, as a client may start the shim, the ledgers
// go under the account's home directory, else the temporary directory; never
// into the working directory.
func TestDefaultDirNeverRelative(t *testing.T) {
	u, err := user.Current()
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		t.Skipf("no home directory for this account (%v)", err)
	}
	state := filepath.Join(u.HomeDir, ".local", "state", "mcpshim")
	if runtime.GOOS == "windows" {
		state = filepath.Join(u.HomeDir, "AppData", "Local", "mcpshim")
	}
	for _, env := range []map[string]string{
		{},
		{"HOME": "", "XDG_STATE_HOME": ""},
		{"HOME": "home", "XDG_STATE_HOME": "state", "LOCALAPPDATA": "local", "USERPROFILE": "."},
	} {
		if got := DefaultDir(func(k string) string { return env[k] }); got != state {
			t.Errorf("DefaultDir(%v) = %s, want %s", env, got, state)
		}
	}

	currentUser = func() (*user.User, error) { return nil, errors.New("no such user") }
	t.Cleanup(func() { currentUser = user.Current })
	got := DefaultDir(func(string) string { return "" })
	if !filepath.IsAbs(got) || !strings.HasPrefix(got, os.TempDir()) {
		t.Errorf("DefaultDir with no home and no account = %s, want an absolute path in %s", got, os.TempDir())
	}
	t.Logf("without a home: %s", got)
}
