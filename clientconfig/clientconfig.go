// Package clientconfig reads the MCP server entries of the configs clients
// already have (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Codex,
// Gemini CLI, Cline, Zed), in the places each client reads, expands their
// variables the way each client does, and rewrites entries to run behind
// mcpshim without disturbing the rest of the file: JSON, JSON with comments
// and Codex's TOML, by splicing only the command and args values. Which entry
// counts where (ForProject, Select) and what is wrong with one (Problem) are
// its too, as values for the CLI to print.
// It never starts a server nor reads a ledger.
package clientconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// Server is one server entry of a client config, after variable expansion.
type Server struct {
	Name    string // entry key
	File    string // the file it came from
	Project string // the projects key in ~/.claude.json for a per-project entry, "" otherwise
	Type    string // "stdio", "http" or "sse" ("streamable-http" is reported as "http")

	// stdio
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// remote
	URL     string
	Headers map[string]string

	// Disabled: the client does not start it ("disabled": true in Cline,
	// "enabled": false in Zed and Codex).
	Disabled bool

	// Wrapped says the entry runs mcpshim; Command and Args are then the real
	// server after "--" and ShimArgs the mcpshim flags before it.
	Wrapped  bool
	ShimArgs []string
}

// Problem is a config defect reported by file and server, such as a ${VAR}
// that is unset and has no default.
type Problem struct {
	File, Server string
	Project      string // the entry's project in ~/.claude.json, as Server.Project
	Msg          string
}

// Text is the problem without its file and server: "project P: msg" for a
// project's entry.
func (p Problem) Text() string {
	if p.Project != "" {
		return "project " + p.Project + ": " + p.Msg
	}
	return p.Msg
}

func (p Problem) String() string {
	if p.Server == "" {
		return p.File + ": " + p.Text()
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Server, p.Text())
}

// ForProject applies Claude Code's precedence for a session started in dir:
// a project's own entry in ~/.claude.json comes before .mcp.json's, which
// comes before the user's; another project's entries, and their problems, do
// not apply there.
func ForProject(servers []Server, problems []Problem, dir string) ([]Server, []Problem) {
	servers = slices.DeleteFunc(servers, func(s Server) bool { return s.Project != "" && !SameProject(s.Project, dir) })
	sort.SliceStable(servers, func(i, j int) bool { return servers[i].Project != "" && servers[j].Project == "" })
	problems = slices.DeleteFunc(problems, func(p Problem) bool { return p.Project != "" && !SameProject(p.Project, dir) })
	return servers, problems
}

// dialect is whose rules a file follows: where the entries are, which
// variables expand, whether comments are allowed.
type dialect int

const (
	claudeCode    dialect = iota // mcpServers; ${VAR} and ${VAR:-default}
	claudeDesktop                // mcpServers; nothing expands
	cursor                       // mcpServers; ${env:VAR}, ${workspaceFolder}, ...
	vsCode                       // servers; ${env:VAR}, ${workspaceFolder}, ...; JSONC
	windsurf                     // mcpServers; ${env:VAR}; serverUrl for a remote server
	gemini                       // mcpServers; $VAR and ${VAR}; httpUrl (http) or url (sse); comments allowed
	cline                        // mcpServers; nothing expands; "disabled": true
	zed                          // context_servers in settings.json; JSONC; "enabled": false
	codex                        // [mcp_servers.NAME] tables in config.toml; nothing expands; enabled = false
)

// clientName is the client a dialect belongs to, for messages.
var clientName = [...]string{"Claude Code", "Claude Desktop", "Cursor", "VS Code", "Windsurf", "Gemini CLI", "Cline", "Zed", "Codex"}

// section is the key that holds a dialect's server entries.
func (d dialect) section() string {
	switch d {
	case vsCode:
		return "servers"
	case zed:
		return "context_servers"
	case codex:
		return "mcp_servers"
	}
	return "mcpServers"
}

// comments says the client reads its file with comments allowed (VS Code
// and Zed write them; Gemini CLI strips them before JSON.parse), commas the
// same for trailing commas (VS Code and Zed only); the others parse strict
// JSON, where either would break the client.
func (d dialect) comments() bool { return d == vsCode || d == zed || d == gemini }
func (d dialect) commas() bool   { return d == vsCode || d == zed }

// dialectOf names the dialect from the path, in any case (Windows has Zed's
// settings in %APPDATA%\Zed), and, for a file under another name, from its
// top-level key.
func dialectOf(file string, doc *value) dialect {
	base, parent := strings.ToLower(filepath.Base(file)), strings.ToLower(filepath.Base(filepath.Dir(file)))
	switch {
	case base == "claude_desktop_config.json":
		return claudeDesktop
	case base == "mcp.json" && parent == ".cursor":
		return cursor
	case base == "mcp.json" && (parent == ".vscode" || parent == "user"):
		return vsCode
	case base == "mcp_config.json":
		return windsurf
	case base == "settings.json" && parent == ".gemini":
		return gemini
	case base == "cline_mcp_settings.json":
		return cline
	case base == "settings.json" && (parent == "zed" || parent == ".zed"):
		return zed
	case filepath.Ext(base) == ".toml":
		return codex
	case doc != nil && doc.get("servers") != nil && doc.get("mcpServers") == nil:
		return vsCode
	case doc != nil && doc.get("context_servers") != nil:
		return zed
	}
	return claudeCode
}

// Find returns the config files the clients would read for projectDir and
// home, existing ones only, grouped by client: Claude Code (.mcp.json,
// ~/.claude.json), Claude Desktop, Cursor (project, then user), VS Code
// (workspace, then user), Windsurf, Codex (project, then $CODEX_HOME or
// ~/.codex), Gemini CLI (project, then user), Cline, Zed (project, then
// user). An empty projectDir or home skips the files under it; getenv reads
// CODEX_HOME and XDG_CONFIG_HOME.
func Find(projectDir, home string, getenv func(string) string) []string {
	var found []string
	seen := map[string]bool{}
	for _, f := range Candidates(projectDir, home, runtime.GOOS, getenv) {
		if seen[f] {
			continue // the project is home: one file, read once
		}
		seen[f] = true
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			found = append(found, f)
		}
	}
	return found
}

// Candidates lists every file Find looks at on goos, existing or not.
func Candidates(projectDir, home, goos string, getenv func(string) string) []string {
	var out []string
	add := func(dir string, elem ...string) {
		if dir != "" {
			out = append(out, filepath.Join(append([]string{dir}, elem...)...))
		}
	}
	// Where the desktop apps keep per-user files: ~/Library/Application
	// Support on macOS, %APPDATA% (the roaming profile) on Windows,
	// $XDG_CONFIG_HOME (~/.config) elsewhere.
	appData := ""
	switch {
	case goos == "windows" && getenv("APPDATA") != "":
		appData = getenv("APPDATA")
	case home == "":
	case goos == "windows":
		appData = filepath.Join(home, "AppData", "Roaming")
	case goos == "darwin":
		appData = filepath.Join(home, "Library", "Application Support")
	case getenv("XDG_CONFIG_HOME") != "":
		appData = getenv("XDG_CONFIG_HOME")
	default:
		appData = filepath.Join(home, ".config")
	}
	codexHome := getenv("CODEX_HOME")
	if codexHome == "" && home != "" {
		codexHome = filepath.Join(home, ".codex")
	}
	add(projectDir, ".mcp.json")
	add(home, ".claude.json")
	add(appData, "Claude", "claude_desktop_config.json")
	add(projectDir, ".cursor", "mcp.json")
	add(home, ".cursor", "mcp.json")
	add(projectDir, ".vscode", "mcp.json")
	add(appData, "Code", "User", "mcp.json")
	add(home, ".codeium", "windsurf", "mcp_config.json")
	add(projectDir, ".codex", "config.toml")
	add(codexHome, "config.toml")
	add(projectDir, ".gemini", "settings.json")
	add(home, ".gemini", "settings.json")
	add(appData, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
	add(projectDir, ".zed", "settings.json")
	switch {
	case goos == "windows":
		add(appData, "Zed", "settings.json")
	case goos == "darwin" && home != "":
		add(filepath.Join(home, ".config"), "zed", "settings.json") // Zed uses ~/.config on macOS too
	default:
		add(appData, "zed", "settings.json")
	}
	return out
}

// SplitShim reports whether command and args run mcpshim in front of a
// server, and splits the args where the shim's own flags end, as the shim
// reads them: at the first "--", or without one (a launcher that splits a
// command line at its own first "--" strips it) at the first argument that
// is neither a flag nor a flag's value. An entry that runs one of mcpshim's
// subcommands (mcpshim fixture healthy), or only flags (a --url bridge), has
// no server behind the shim.
func SplitShim(command string, args []string) (shim, real []string, ok bool) {
	end, at, ok := splitShim(command, args)
	if !ok {
		return nil, nil, false
	}
	return args[:end], args[at:], true
}

// splitShim is SplitShim as indexes: the shim's flags are args[:end], the
// server's command args[at] (at is end, or end+1 past a "--"; len(args)
// when nothing follows the "--").
func splitShim(command string, args []string) (end, at int, ok bool) {
	if !isShim(command) {
		return 0, 0, false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i, i + 1, true
		case len(a) < 2 || a[0] != '-': // flag.Parse stops here: the server's command
			if slices.Contains(shimSubcommands, a) {
				return 0, 0, false
			}
			return i, i, true
		}
		if name, _, value := strings.Cut(strings.TrimLeft(a, "-"), "="); !value && !shimSwitches[name] {
			i++ // the flag's value, whatever it looks like
		}
	}
	return 0, 0, false
}

// shimSwitches are the shim's flags that take no value (its bool flags and
// -h); every other one takes a value. shimSubcommands are the words mcpshim
// runs as a subcommand rather than as a server's command. cmd/mcpshim's
// TestSplitShimAsTheShimParses holds both to the shim's own flag set and
// subcommands.
var (
	shimSwitches    = map[string]bool{"divert-noise": true, "quiet": true, "egress-witness": true, "h": true, "help": true}
	shimSubcommands = []string{"ledger", "probe", "lock", "auth", "wrap", "unwrap", "demo", "fixture", "guard", "completion",
		"help", "version", "__complete", "__man"}
)

// SameProject reports whether a project key of ~/.claude.json names dir.
// On Windows paths are compared as Windows does, without case, and with /
// and \ alike: C:/Users/dev/app is C:\Users\dev\app.
func SameProject(key, dir string) bool {
	if runtime.GOOS != "windows" {
		return key == dir
	}
	return strings.EqualFold(filepath.Clean(filepath.FromSlash(key)), filepath.Clean(filepath.FromSlash(dir)))
}

// isShim reports whether command runs mcpshim: /usr/local/bin/mcpshim, or
// C:\Tools\mcpshim.exe in any case, whichever system reads the config.
func isShim(command string) bool {
	base := strings.ToLower(command[strings.LastIndexAny(command, `/\`)+1:])
	return base == "mcpshim" || base == "mcpshim.exe"
}

// expander substitutes variables by one dialect's rules.
type expander struct {
	d         dialect
	lookup    func(string) (string, bool)
	workspace string // what ${workspaceFolder} means; "" when nothing
}

// expand substitutes every ${...} in s, not only a whole-value one, and for
// Gemini CLI every $VAR. A reference it cannot resolve stays as written and
// adds a message.
func (x *expander) expand(s string) (string, []string) {
	if x.d == cline || x.d == zed || x.d == codex {
		return s, nil // they pass values on as written
	}
	var b strings.Builder
	var probs []string
	if x.d == gemini {
		s, probs = x.bareVars(s)
	}
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		ref, end := s[i+2:i+2+j], i+3+j
		b.WriteString(s[:i])
		if v, ok, msg := x.resolve(ref); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i:end])
			if msg != "" {
				probs = append(probs, msg)
			}
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String(), probs
}

// resolve gives the value of one reference; ok false keeps it literal, with
// msg saying why when that is a defect.
func (x *expander) resolve(ref string) (val string, ok bool, msg string) {
	switch x.d {
	case claudeDesktop:
		return "", false, fmt.Sprintf("${%s} reaches the server as written: Claude Desktop does not expand variables", ref)
	case claudeCode:
		if ref == "" {
			return "", false, "" // Claude Code leaves "${}" alone too
		}
		name, def, hasDef := strings.Cut(ref, ":-")
		if v, ok := x.lookup(name); ok {
			return v, true, ""
		}
		if hasDef {
			return def, true, ""
		}
		return "", false, fmt.Sprintf("${%s} is not set and has no default", name)
	case gemini:
		if v, ok := x.lookup(ref); ok {
			return v, true, ""
		}
		return "", false, fmt.Sprintf("${%s} is not set", ref)
	case windsurf:
		if !strings.HasPrefix(ref, "env:") {
			return "", false, "" // ${file:...} and the like: Windsurf's own business
		}
	}
	switch {
	case strings.HasPrefix(ref, "env:"):
		if v, ok := x.lookup(ref[len("env:"):]); ok {
			return v, true, ""
		}
		return "", false, fmt.Sprintf("${%s} is not set", ref)
	case ref == "workspaceFolder" || ref == "workspaceFolderBasename":
		if x.workspace == "" {
			return "", false, fmt.Sprintf("${%s} has no workspace folder in a user-level config", ref)
		}
		if ref == "workspaceFolderBasename" {
			return filepath.Base(x.workspace), true, ""
		}
		return x.workspace, true, ""
	case ref == "userHome":
		if v, ok := x.lookup("HOME"); ok {
			return v, true, ""
		}
		return "", false, "${userHome}: HOME is not set"
	case ref == "pathSeparator" || ref == "/":
		return string(filepath.Separator), true, ""
	case strings.HasPrefix(ref, "input:"):
		return "", false, fmt.Sprintf("${%s} is prompted for by the editor; its value is unknown here", ref)
	}
	return "", false, fmt.Sprintf("${%s} is not a variable this client expands", ref)
}

// bareVars substitutes Gemini CLI's $VAR references (letters, digits and _,
// not starting with a digit); ${VAR} is left to expand.
func (x *expander) bareVars(s string) (string, []string) {
	var b strings.Builder
	var probs []string
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i+1 >= len(s) {
			break
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		b.WriteString(s[:i])
		if j == i+1 {
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		if v, ok := x.lookup(s[i+1 : j]); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i:j])
			probs = append(probs, fmt.Sprintf("$%s is not set", s[i+1:j]))
		}
		s = s[j:]
	}
	b.WriteString(s)
	return b.String(), probs
}
