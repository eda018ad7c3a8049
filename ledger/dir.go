package ledger

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
)

// DefaultDir is the directory of default ledgers: $XDG_STATE_HOME/mcpshim,
// else %LOCALAPPDATA%\mcpshim on Windows (the local, not roaming, profile),
// else under the home directory (~/.local/state/mcpshim, on Windows
// AppData\Local\mcpshim), else in the temporary directory. A relative value
// is ignored: a client may start the shim with none of these variables set,
// in a working directory of its choosing, and the ledgers must not follow it.
func DefaultDir(getenv func(string) string) string {
	// XDG: "If an implementation encounters a relative path in any of these
	// variables it should consider the path invalid and ignore it."
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "mcpshim")
	}
	if dir := getenv("LOCALAPPDATA"); runtime.GOOS == "windows" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "mcpshim")
	}
	if home := homeDir(getenv); home != "" {
		if runtime.GOOS == "windows" {
			return filepath.Join(home, "AppData", "Local", "mcpshim")
		}
		return filepath.Join(home, ".local", "state", "mcpshim")
	}
	// No home at all: the temporary directory, which is the user's own on
	// Windows; on Unix /tmp is shared, so the directory is named for the user.
	if runtime.GOOS == "windows" {
		return filepath.Join(os.TempDir(), "mcpshim")
	}
	return filepath.Join(os.TempDir(), "mcpshim-"+strconv.Itoa(os.Getuid()))
}

// homeDir is the user's home from the environment (USERPROFILE first on
// Windows, where HOME is set only by some shells), else the account's, else
// "": never a relative path.
func homeDir(getenv func(string) string) string {
	names := []string{"HOME"}
	if runtime.GOOS == "windows" {
		names = []string{"USERPROFILE", "HOME"}
	}
	for _, n := range names {
		if h := getenv(n); filepath.IsAbs(h) {
			return h
		}
	}
	if u, err := currentUser(); err == nil && filepath.IsAbs(u.HomeDir) {
		return u.HomeDir
	}
	return ""
}

// currentUser is user.Current; a test replaces it to reach the last resort.
var currentUser = user.Current
