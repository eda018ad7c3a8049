package proc

import (
	"path/filepath"
	"slices"
	"strings"
)

// PackageRunner reports whether argv starts a package runner: a program that
// may download and install the server before it runs it.
// On Windows the runner is npx.cmd or uvx.exe, or is run through cmd /c.
func PackageRunner(path string, args []string) bool {
	name := commandName(path)
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch name {
	case "cmd":
		if f := cmdC(args); len(f) > 0 {
			return PackageRunner(f[0], f[1:])
		}
	case "npx", "pnpx", "bunx", "uvx", "pipx":
		return true
	case "npm", "pnpm", "yarn", "bun":
		return slices.Contains([]string{"exec", "x", "dlx"}, first)
	case "uv":
		return first == "run" || first == "tool" && len(args) > 1 && args[1] == "run"
	}
	return false
}

// commandName is the program's name in lower case (Windows does not tell
// cases apart) without its directory or a Windows executable's extension:
// C:\Program Files\nodejs\NPX.CMD is npx.
func commandName(path string) string {
	return strings.ToLower(trimExe(path[strings.LastIndexAny(path, `/\`)+1:]))
}

// trimExe is name without a Windows executable's extension, in any case.
func trimExe(name string) string {
	if ext := filepath.Ext(name); slices.Contains([]string{".cmd", ".exe", ".bat", ".com"}, strings.ToLower(ext)) {
		return name[:len(name)-len(ext)]
	}
	return name
}

// cmdC is the command line cmd.exe's arguments run (cmd /c npx -y x, or
// cmd /c "npx -y x" with it in one argument), split on spaces; nil for none.
func cmdC(args []string) []string {
	if len(args) < 2 || !strings.EqualFold(args[0], "/c") && !strings.EqualFold(args[0], "/k") {
		return nil
	}
	return strings.Fields(strings.Join(args[1:], " "))
}

// GuardReady is what the shim writes to its guard when the handshake was
// answered: the install, if any, is done (see RunGuard).
const GuardReady = 'r'
