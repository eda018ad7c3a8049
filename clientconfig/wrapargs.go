package clientconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
)

// ErrWrapHelp is ParseWrapArgs' answer to -h or --help.
var ErrWrapHelp = errors.New("help requested")

// WrapFlags and UnwrapFlags are the commands' own flags, for suggestions.
var (
	WrapFlags   = []string{"config", "server", "dry-run", "check", "json", "all-projects", "remote", "ledger", "help"}
	UnwrapFlags = []string{"config", "server", "dry-run", "json", "all-projects", "help"}
)

// NpxCacheNote warns when self, the path wrap bakes in, is in npx's cache
// (~/.npm/_npx/HASH/...): npm may clear that cache or install the next version
// under another hash, and the entries would then fail to start.
func NpxCacheNote(self string) string {
	if !strings.Contains(filepath.ToSlash(self), "/_npx/") {
		return ""
	}
	return fmt.Sprintf("%s is in npx's cache, which npm may clear or move; for a path that stays, "+
		"install mcpshim (npm install -g mcpshim, a release archive, or go install) and run its wrap, "+
		`or write "command": "npx", "args": ["-y", "mcpshim", "--name", NAME, "--", ...] into the entries`, self)
}

// WrapOptions are wrap's and unwrap's flags as ParseWrapArgs read them.
type WrapOptions struct {
	Configs     []string
	Servers     []string
	DryRun      bool
	Check       bool
	JSON        bool
	AllProjects bool
	Remote      bool     // also bridge remote entries (wrap --remote)
	Baked       []string // the flags written between the entry name and "--"
	OAuth       []string // the --oauth-* flags, baked into --remote entries only
	Ledger      string   // the --ledger directory, absolute, or "off"
}

// ShimFlags is what wrap asks of the shim's own flag set: whether name is
// one of its flags and takes a value, all their names, and the shim's checks
// of the flags to bake (the --oauth-* ones apart).
type ShimFlags struct {
	Lookup     func(name string) (known, takesValue bool)
	Names      func() []string
	Check      func(args []string) error
	CheckOAuth func(args []string) error
}

// ParseWrapArgs reads wrap's own flags wherever they stand; every other flag
// must be one of the shim's, and is baked in as given after the shim's own
// flag set has accepted it (unwrap bakes nothing). Paths are made absolute
// against cwd.
func ParseWrapArgs(args []string, unwrap bool, cwd string, shim ShimFlags) (WrapOptions, error) {
	var o WrapOptions
	var ledger, baked []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") || arg == "-" {
			return o, fmt.Errorf("unexpected argument %q: wrap rewrites config files and takes no command", arg)
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		value := func() (string, error) {
			switch {
			case hasVal && val != "":
				return val, nil
			case hasVal || i+1 >= len(args) || args[i+1] == "":
				return "", fmt.Errorf("%s needs a value", arg)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "h", "help":
			return o, ErrWrapHelp
		case "config":
			var f string
			f, err = value()
			o.Configs = append(o.Configs, f)
		case "server":
			var s string
			s, err = value()
			o.Servers = append(o.Servers, s)
		case "remote":
			switch {
			case hasVal:
				err = fmt.Errorf("%s takes no value", arg)
			case unwrap:
				err = fmt.Errorf("unknown flag %s: unwrap restores remote entries without it", arg)
			}
			o.Remote = true
		case "dry-run", "check", "json", "all-projects":
			switch {
			case hasVal:
				err = fmt.Errorf("%s takes no value", arg)
			case name == "check" && unwrap:
				err = fmt.Errorf("unknown flag %s", arg)
			}
			o.DryRun = o.DryRun || name == "dry-run"
			o.Check = o.Check || name == "check"
			o.JSON = o.JSON || name == "json"
			o.AllProjects = o.AllProjects || name == "all-projects"
		default:
			if unwrap {
				return o, fmt.Errorf("unknown flag %s%s", arg, cmdline.DidYouMean(name, UnwrapFlags, "--"))
			}
			switch known, takesValue := shim.Lookup(name); {
			case strings.HasPrefix(name, "oauth-") && known:
				var v string
				if v, err = value(); err == nil {
					if name == "oauth-client-secret" && !strings.Contains(v, "${") {
						err = errors.New("--oauth-client-secret: write ${VAR} (and set VAR in the entry's env or your shell): a secret written into a config file is a secret on disk")
					}
					if (name == "oauth-client-key" || name == "oauth-assertion-file") && !filepath.IsAbs(v) {
						v = filepath.Join(cwd, v)
					}
					o.OAuth = append(o.OAuth, "--"+name, v)
				}
			case name == "name":
				err = errors.New("--name is not baked: wrap names each server after its entry")
			case !known:
				err = fmt.Errorf("unknown flag %s: neither a wrap flag nor one of mcpshim's%s", arg, cmdline.DidYouMean(name, append(WrapFlags, shim.Names()...), "--"))
			case name == "ledger":
				var dir string
				if dir, err = value(); err == nil {
					if dir != "off" && !filepath.IsAbs(dir) {
						dir = filepath.Join(cwd, dir)
					}
					ledger, o.Ledger = []string{"--ledger", dir}, dir
				}
			case !takesValue || hasVal && name != "lock":
				baked = append(baked, arg)
			default:
				var v string
				if v, err = value(); err == nil {
					if name == "lock" && !filepath.IsAbs(v) {
						v = filepath.Join(cwd, v)
					}
					baked = append(baked, "--"+name, v)
				}
			}
		}
		if err != nil {
			return o, err
		}
	}
	o.Baked = append(ledger, baked...)
	if len(o.OAuth) > 0 && !o.Remote {
		return o, errors.New("the --oauth-* flags go into remote entries: add --remote")
	}
	if err := shim.CheckOAuth(o.OAuth); err != nil {
		return o, fmt.Errorf("mcpshim would refuse the flags to bake (%s): %v", strings.Join(o.OAuth, " "), err)
	}
	if o.Check && o.DryRun {
		return o, errors.New("--check and --dry-run do not go together: --check writes nothing")
	}
	if err := shim.Check(o.Baked); err != nil {
		return o, fmt.Errorf("mcpshim would refuse the flags to bake (%s): %v", strings.Join(o.Baked, " "), err)
	}
	return o, nil
}
