package proc

import (
	"path/filepath"
	"strings"
)

// launchers run a server named by their arguments, not by themselves.
var launchers = map[string]bool{"npx": true, "uvx": true, "bunx": true, "pnpx": true, "node": true, "deno": true, "bun": true,
	"python": true, "python3": true, "uv": true, "pipx": true, "docker": true, "podman": true, "pnpm": true, "yarn": true, "npm": true}

var genericScripts = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "__main__": true, "app": true, "mcp": true}

var genericDirs = map[string]bool{"dist": true, "build": true, "src": true, "lib": true, "bin": true, "out": true, ".": true, "/": true}

// Label names a server after what it runs: for a launcher (npx, uvx,
// node, python, docker run …) the package, module, script or image, not the
// launcher.
// On Windows cmd /c is looked through, and .exe and .cmd left out.
func Label(command []string) string {
	cmd := commandName(command[0])
	if f := cmdC(command[1:]); cmd == "cmd" && len(f) > 0 {
		return Label(f)
	}
	if r, ok := ParseContainerRun(command); ok {
		return scriptName(r.Image)
	}
	name := trimExe(command[0][strings.LastIndexAny(command[0], `/\`)+1:])
	if launchers[cmd] {
		args := command[1:]
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-m" && i+1 < len(args): // python -m module
				name = args[i+1]
				i = len(args)
			case a == "run" || a == "exec" || a == "dlx" || a == "x" || a == "tool" || a == "--":
			case strings.HasPrefix(a, "-"):
				if (a == "-p" || a == "--package" || a == "--from" || a == "-e" || a == "--env" || a == "-v" || a == "--name") && i+1 < len(args) {
					i++
				}
			default:
				name = scriptName(a)
				i = len(args)
			}
		}
	}
	return name
}

func scriptName(a string) string {
	// @scope/pkg@1.2.3 -> pkg; ghcr.io/org/image:tag -> image. A version's @
	// is in the last path element, not after a slash: the @ of
	// node_modules/@scope/pkg/dist/index.js is the scope's.
	if i := strings.LastIndexByte(a, '@'); i > 0 && a[i-1] != '/' && i > strings.LastIndexByte(a, '/') {
		a = a[:i]
	}
	if i := strings.LastIndexByte(a, ':'); i > strings.LastIndexByte(a, '/') {
		a = a[:i]
	}
	ext := filepath.Ext(a)
	if ext == ".js" || ext == ".mjs" || ext == ".cjs" || ext == ".ts" || ext == ".py" {
		a = strings.TrimSuffix(a, ext)
		dir := filepath.Dir(a)
		if genericScripts[filepath.Base(a)] {
			for genericDirs[filepath.Base(dir)] && dir != filepath.Dir(dir) {
				dir = filepath.Dir(dir)
			}
			if !genericDirs[filepath.Base(dir)] {
				return filepath.Base(dir)
			}
		}
	}
	return filepath.Base(a)
}
