package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PathFor is where the shim writes the ledger of the server called name
// given --ledger's value: empty means the default file, a directory gets
// the server's file inside it, "off" (or "none") no ledger at all ("").
func PathFor(flagValue, name string, getenv func(string) string) string {
	switch flagValue {
	case "off", "none":
		return ""
	case "":
		return DefaultPath(getenv, name)
	}
	// A path that does not exist yet is a file only when it is named like
	// one (server.jsonl): --ledger /var/log/mcp means a directory, slash or not.
	st, err := os.Stat(flagValue)
	if (err == nil && st.IsDir()) || strings.HasSuffix(flagValue, string(os.PathSeparator)) ||
		(errors.Is(err, fs.ErrNotExist) && filepath.Ext(flagValue) == "") {
		return PathIn(flagValue, name)
	}
	return flagValue
}
