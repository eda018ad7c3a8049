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

// The scripts ask the installed mcpshim what fits (mcpshim __complete, from
// the flags its own --help lists, their values and the ledger's run ids), so
// they cannot drift from the binary. A first line ":files" or ":commands"
// hands the word to the shell's own file or command completion.
const bashCompletion = `# bash completion for mcpshim: source <(mcpshim completion bash)
_mcpshim() {
	local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n' out
	out=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
	case ${out[0]} in
	:files) COMPREPLY=($(compgen -f -- "$cur")) ;;
	:commands) COMPREPLY=($(compgen -c -- "$cur" | sort -u)) ;;
	*) COMPREPLY=($(compgen -W "${out[*]}" -- "$cur")) ;;
	esac
}
complete -F _mcpshim mcpshim
`

const zshCompletion = `#compdef mcpshim
# zsh completion for mcpshim: source <(mcpshim completion zsh), after compinit
_mcpshim() {
	local -a out
	out=(${(f)"$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
	case $out[1] in
	:files) _files ;;
	:commands) _command_names -e ;;
	*) compadd -- $out ;;
	esac
}
if (( $+functions[compdef] )); then
	compdef _mcpshim mcpshim
fi
`

const fishCompletion = `# fish completion for mcpshim: mcpshim completion fish > ~/.config/fish/completions/mcpshim.fish
function __mcpshim_complete
	set -l tokens (commandline -opc)
	set -l cur (commandline -ct)
	set -l out ($tokens[1] __complete $tokens[2..-1] "$cur" 2>/dev/null)
	switch "$out[1]"
	case :files
		__fish_complete_path "$cur"
	case :commands
		__fish_complete_command
	case '*'
		string join \n -- $out
	end
end
complete -c mcpshim -f -a '(__mcpshim_complete)'
`

// runCompletion is `mcpshim completion SHELL`.
func runCompletion(c *cli, args []string) int {
	scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion, "powershell": powershellCompletion}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(c.stdout, completionUsage)
		return 0
	}
	if len(args) != 1 || scripts[args[0]] == "" {
		if len(args) > 0 {
			fmt.Fprintf(c.stderr, "mcpshim completion: no shell %q%s\n", args[0], cmdline.DidYouMean(args[0], []string{"bash", "zsh", "fish", "powershell"}, ""))
		}
		fmt.Fprint(c.stderr, completionUsage)
		return exitUsage
	}
	r := strings.NewReplacer("@SUBCOMMANDS@", strings.Join(subcommands, " "), "@LEDGER@", ledgerSubcommands)
	fmt.Fprint(c.stdout, r.Replace(scripts[args[0]]))
	return 0
}
