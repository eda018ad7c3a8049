package proc

import (
	"path/filepath"
	"slices"
	"strings"
)

// PackageRunner reports whether argv starts a package runner: a program that
// may download and install the server before it runs it.
func PackageRunner(path string, args []string) bool {
	name := strings.TrimSuffix(filepath.Base(path), ".cmd")
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch name {
	case "npx", "pnpx", "bunx", "uvx", "pipx":
		return true
	case "npm", "pnpm", "yarn", "bun":
		return slices.Contains([]string{"exec", "x", "dlx"}, first)
	case "uv":
		return first == "run" || first == "tool" && len(args) > 1 && args[1] == "run"
	}
	return false
}

// GuardReady is what the shim writes to its guard when the handshake was
// answered: the install, if any, is done (see RunGuard).
const GuardReady = 'r'
