// Command mcpshim sits in front of a stdio MCP server: it relays JSON-RPC byte for
// byte, writes a phase ledger of what happened, and supervises the server.
//
// This package is the front door only: one file per subcommand parses its
// flags, calls the package that owns the work and prints the result. The
// relay, the ledger, the reports and the configs live in their packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"

	group "github.com/oklog/run"

	"github.com/mcpshim-dev/mcpshim/clientconfig"
	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/probe"
)

func main() {
	// SIGPIPE is handled by the relay as a vanished client, never as a silent death.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
}

// cli is what every subcommand gets from the process: its environment and streams.
type cli struct {
	env    []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// home is the user's home directory, where the clients keep their configs:
// %USERPROFILE% on Windows (HOME is set there only by some shells), $HOME
// elsewhere.
func (c *cli) home() string { return clientconfig.Home(c.getenv) }

// getenv looks a variable up in the environment the command was given.
func (c *cli) getenv(key string) string {
	v, _ := c.lookupEnv(key)
	return v
}

// envOr is the variable's value, or def when it is unset or empty: the
// default of a flag people set once per machine (MCPSHIM_*).
func (c *cli) envOr(key, def string) string {
	if v := c.getenv(key); v != "" {
		return v
	}
	return def
}

// Names are not case sensitive on Windows (Path is PATH there).
func (c *cli) lookupEnv(key string) (string, bool) {
	for i := len(c.env) - 1; i >= 0; i-- {
		kv := c.env[i]
		if len(kv) > len(key) && kv[len(key)] == '=' && (kv[:len(key)] == key || runtime.GOOS == "windows" && strings.EqualFold(kv[:len(key)], key)) {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}

// Exit statuses from sysexits.h and the shell.
const (
	exitUsage        = 64                 // EX_USAGE: a flag error or a missing command
	exitTempFail     = probe.ExitTempFail // EX_TEMPFAIL (75): only timeouts
	exitConfig       = lock.ExitConfig    // EX_CONFIG (78): a wiring problem a person must fix
	exitNotExecuting = 126                // the command exists but cannot be executed
	exitNotFound     = 127                // the command cannot be found
)

// run is main without the process: it parses args and dispatches to a subcommand.
func run(ctx context.Context, args []string, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{env: env, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 0 {
		sub := args[1:]
		switch args[0] {
		case "ledger":
			return untilSignal(ctx, func(ctx context.Context) int { return runLedger(ctx, c, sub) })
		case "probe":
			return untilSignal(ctx, func(ctx context.Context) int { return runProbe(ctx, c, sub) })
		case "lock":
			return untilSignal(ctx, func(ctx context.Context) int { return runLock(ctx, c, sub) })
		case "auth":
			return untilSignal(ctx, func(ctx context.Context) int { return runAuth(ctx, c, sub) })
		case "wrap":
			return runWrap(ctx, c, sub, false)
		case "unwrap":
			return runWrap(ctx, c, sub, true)
		case "demo":
			return untilSignal(ctx, func(ctx context.Context) int { return runDemo(ctx, c, sub) })
		case "fixture":
			return runFixture(ctx, c, args[1:])
		case "guard":
			return runGuard(c, args[1:])
		case "__complete":
			return runComplete(c, args[1:])
		case "__man":
			return runMan(c)
		case "help", "-h", "-help", "--help":
			return runHelp(c, args[1:])
		case "version", "-version", "--version":
			return runVersion(c, args[1:])
		case "completion":
			return runCompletion(c, sub)
		}
		// A word where a subcommand or a flag goes, and no "--": a typo of
		// a subcommand (near one and no such command: ledgr), else a server
		// command without its "--" (the shim runs it: deno, npx).
		if !strings.HasPrefix(args[0], "-") && !slices.Contains(args, "--") && cmdline.Suggest(args[0], subcommands) != "" && !onPath(args[0]) {
			fmt.Fprintf(c.stderr, "mcpshim: unknown command %q%s\n", args[0], cmdline.DidYouMean(args[0], subcommands, ""))
			fmt.Fprintf(c.stderr, "the commands are %s; a server goes after --: mcpshim [flags] -- %s\n", strings.Join(subcommands, ", "), strings.Join(args, " "))
			return exitUsage
		}
	}
	// The shim handles its own signals: it records and forwards them.
	return runShim(ctx, c, args)
}

// onPath says whether name is a command the shim could start.
func onPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// untilSignal runs a subcommand until it returns. SIGINT, SIGTERM or SIGHUP
// cancel its context instead of killing the process, so that it can stop
// what it started (the servers a probe launched are in process groups of
// their own, out of reach of the terminal's Ctrl-C).
func untilSignal(ctx context.Context, command func(context.Context) int) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	status := 0
	var g group.Group
	// The command: returns when it is done; interrupted by cancelling its context.
	g.Add(func() error {
		status = command(ctx)
		return nil
	}, func(error) { cancel() })
	// Signals: returns on the first one, or when the command is done.
	g.Add(group.SignalHandler(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP))
	var sig *group.SignalError
	if err := g.Run(); errors.As(err, &sig) {
		if s, ok := sig.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return status
}

// parseFlags parses a subcommand's flags, in any order; a positional
// argument is a usage error. It returns the status to exit with, or -1 to
// carry on. -h and --help print the usage on stdout and exit 0; a mistake is
// one line on stderr (cmdline) and exits 64.
func parseFlags(c *cli, fs *flag.FlagSet, usage string, args []string) int {
	help := "mcpshim " + fs.Name() + " --help"
	pos, err := cmdline.Parse(fs, args, help)
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		fmt.Fprint(c.stdout, usage)
		cmdline.PrintFlags(c.stdout, fs)
		return 0
	case err != nil:
		fmt.Fprintf(c.stderr, "mcpshim %s: %v\n", fs.Name(), err)
		return exitUsage
	case len(pos) > 0:
		fmt.Fprintf(c.stderr, "mcpshim %s: unexpected argument %q (%s shows the usage)\n", fs.Name(), pos[0], help)
		return exitUsage
	}
	return -1
}
