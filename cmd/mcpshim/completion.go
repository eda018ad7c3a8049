package main

import (
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/cmdline"
)

const completionUsage = `usage: mcpshim completion bash|zsh|fish|powershell

Prints a completion script for the shell:
  bash:  source <(mcpshim completion bash), or save it as
         ~/.local/share/bash-completion/completions/mcpshim
  zsh:   source <(mcpshim completion zsh) after compinit, or save it as
         _mcpshim on your $fpath
  fish:  mcpshim completion fish > ~/.config/fish/completions/mcpshim.fish
  powershell:  mcpshim completion powershell | Out-String | Invoke-Expression
         (add that line to $PROFILE to keep it)

On Tab the script asks this mcpshim what fits (mcpshim __complete):
subcommands, the flags its own --help lists, flag values (--restart,
--capture, --outcome...), run ids after ledger show and why, server names
after ledger --server, and file names only where a flag or argument takes a
path. After -- the server's command completes as a command.
`

// ledgerSubcommands are the words after "mcpshim ledger".
const ledgerSubcommands = "show why stats tail report prune export"

// runCompletion is `mcpshim completion SHELL`.
func runCompletion(c *cli, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(c.stdout, completionUsage)
		return 0
	}
	script, ok := "", false
	if len(args) == 1 {
		script, ok = cmdline.Script(args[0])
	}
	if !ok {
		if len(args) > 0 {
			fmt.Fprintf(c.stderr, "mcpshim completion: no shell %q%s\n", args[0], cmdline.DidYouMean(args[0], cmdline.Shells, ""))
		}
		fmt.Fprint(c.stderr, completionUsage)
		return exitUsage
	}
	r := strings.NewReplacer("@SUBCOMMANDS@", strings.Join(subcommands, " "), "@LEDGER@", ledgerSubcommands)
	fmt.Fprint(c.stdout, r.Replace(script))
	return 0
}
